"""The architecture zoo of amt's ONNX fixtures (issue #18): every torchvision
0.14 classification family at a small random-weight configuration, and
timm-style patterns built by hand, each exported at several opsets.

Provenance documentation only (imported by gen.py; see ../README.md).

Widths, depths and resolutions are reduced so that the files stay small;
each model keeps its family's code (torchvision's own classes, configured
or with their channel counts divided), so that the exported graph has the
family's operators and patterns.
"""

import functools
import importlib
import math

import torch
import torch.nn.functional as F
from torch import nn


def _tv(name):
    # torchvision.models.<name> as a module (torchvision.models also has
    # functions of the same names).
    return importlib.import_module("torchvision.models." + name)


alexnet, convnext, efficientnet, googlenet, inception, maxvit, mnasnet, mobilenetv3, regnet, resnet, \
    swin_transformer, vgg, vision_transformer = map(_tv, (
        "alexnet convnext efficientnet googlenet inception maxvit mnasnet mobilenetv3 regnet resnet "
        "swin_transformer vgg vision_transformer").split())


# ---------------------------------------------------------------------------
# torchvision families, reduced.

def scaled_conv_block(module, div):
    """The family's BasicConv2d with every channel count divided by div
    (but the 3 input channels of the stem)."""
    class Scaled(module.BasicConv2d):
        def __init__(self, in_channels, out_channels, **kwargs):
            super().__init__(in_channels if in_channels == 3 else in_channels // div, out_channels // div, **kwargs)
    return Scaled


def small_googlenet():
    conv = scaled_conv_block(googlenet, 8)
    m = googlenet.GoogLeNet(num_classes=10, aux_logits=False, transform_input=True, init_weights=False,
                            blocks=[conv, functools.partial(googlenet.Inception, conv_block=conv), googlenet.InceptionAux])
    m.fc = nn.Linear(1024 // 8, 10)
    return m


def small_inception_v3():
    conv = scaled_conv_block(inception, 16)
    blocks = [conv] + [functools.partial(b, conv_block=conv) for b in (
        inception.InceptionA, inception.InceptionB, inception.InceptionC, inception.InceptionD,
        inception.InceptionE, inception.InceptionAux)]
    m = inception.Inception3(num_classes=10, aux_logits=False, transform_input=True, inception_blocks=blocks, init_weights=False)
    m.fc = nn.Linear(2048 // 16, 10)
    return m


def small_mnasnet():
    """MNASNet(0.1) with its last 1×1 conv (1280 channels whatever alpha)
    128 wide."""
    m = mnasnet.MNASNet(0.1, num_classes=10)
    m.layers[14] = nn.Conv2d(m.layers[14].in_channels, 128, 1, bias=False)
    m.layers[15] = nn.BatchNorm2d(128)
    m.classifier[1] = nn.Linear(128, 10)
    return m


class SmallAlexNet(nn.Module):
    """torchvision's AlexNet layer for layer with widths 64/192/384/256/256
    divided by 4 to 8 and a 32-unit classifier; 224×224 input, so that
    AdaptiveAvgPool2d((6, 6)) is exported (as the identity AveragePool)."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(16, 48, kernel_size=5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(48, 64, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(64, 32, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(32, 32, kernel_size=3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.5), nn.Linear(32 * 6 * 6, 32), nn.ReLU(inplace=True),
            nn.Dropout(p=0.5), nn.Linear(32, 32), nn.ReLU(inplace=True), nn.Linear(32, num_classes))

    forward = alexnet.AlexNet.forward


def small_vgg11():
    m = vgg.VGG(vgg.make_layers([8, "M", 16, "M", 32, 32, "M", 32, 32, "M"]), num_classes=10, init_weights=False)
    m.classifier = nn.Sequential(nn.Linear(32 * 7 * 7, 16), nn.ReLU(True), nn.Dropout(), nn.Linear(16, 16), nn.ReLU(True),
                                 nn.Dropout(), nn.Linear(16, 10))
    return m


def small_efficientnet_b0():
    setting, last = efficientnet._efficientnet_conf("efficientnet_b0", width_mult=0.15, depth_mult=0.34)
    return efficientnet.EfficientNet(setting, 0.2, num_classes=10, last_channel=last)


def small_efficientnet_v2():
    E = efficientnet
    setting = [E.FusedMBConvConfig(1, 3, 1, 8, 8, 1), E.FusedMBConvConfig(4, 3, 2, 8, 16, 2),
               E.MBConvConfig(4, 3, 2, 16, 24, 2), E.MBConvConfig(6, 3, 2, 24, 32, 2)]
    return E.EfficientNet(setting, 0.2, num_classes=10, last_channel=128)


def small_mobilenet_v3(arch, width):
    setting, last = mobilenetv3._mobilenet_v3_conf(arch, width_mult=width)
    return mobilenetv3.MobileNetV3(setting, last, num_classes=10)


def small_regnet(se):
    params = regnet.BlockParams.from_init_params(depth=6, w_0=16, w_a=8.0, w_m=2.0, group_width=8,
                                                 se_ratio=0.25 if se else None)
    return regnet.RegNet(params, num_classes=10, stem_width=16)


class SmallBottleneckResNet(resnet.ResNet):
    """torchvision's ResNet with Bottleneck blocks (ResNet-50's block, and
    with groups/width_per_group ResNeXt's and Wide ResNet's), stage widths
    divided by div."""

    def __init__(self, layers, groups=1, width_per_group=64, div=8):
        self.div = div
        super().__init__(resnet.Bottleneck, layers, num_classes=10, groups=groups, width_per_group=width_per_group)
        self.fc = nn.Linear(512 // div * resnet.Bottleneck.expansion, 10)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        return super()._make_layer(block, planes // self.div, blocks, stride, dilate)


def small_convnext(dims=(8, 16, 32, 64), depths=(1, 1, 2, 1)):
    C = convnext.CNBlockConfig
    cfg = [C(dims[i], dims[i + 1] if i + 1 < len(dims) else None, depths[i]) for i in range(len(dims))]
    return convnext.ConvNeXt(cfg, num_classes=10)


def small_vit(image=32, patch=8, layers=2, heads=2, hidden=32, mlp=64):
    return vision_transformer.VisionTransformer(image, patch, layers, heads, hidden, mlp, num_classes=10)


def small_swin():
    # 56×72 input: 14×18 patches, padded to 16×20 for the 4×4 windows.
    return swin_transformer.SwinTransformer([4, 4], 16, [2, 2], [2, 4], [4, 4], num_classes=10, stochastic_depth_prob=0.0)


def small_maxvit():
    return maxvit.MaxVit((64, 64), 16, 4, [16, 32], [1, 1], 8, 0.0, num_classes=10)


# ---------------------------------------------------------------------------
# timm-style patterns, built by hand.

class ManualLayerNorm(nn.Module):
    """A layer norm written out, as timm's and many repositories' models
    do (exported as ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul,
    Add at every opset); channels_first normalises over axis 1 of NCHW
    (timm's LayerNorm2d for ConvNeXt-style CNNs)."""

    def __init__(self, dim, eps=1e-6, channels_first=False):
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.ones(dim)), nn.Parameter(torch.zeros(dim))
        self.eps, self.channels_first = eps, channels_first

    def forward(self, x):
        if self.channels_first:
            u = x.mean(1, keepdim=True)
            s = (x - u).pow(2).mean(1, keepdim=True)
            x = (x - u) / torch.sqrt(s + self.eps)
            return self.weight[:, None, None] * x + self.bias[:, None, None]
        u = x.mean(-1, keepdim=True)
        s = (x - u).pow(2).mean(-1, keepdim=True)
        return self.weight * ((x - u) / torch.sqrt(s + self.eps)) + self.bias


class TimmAttention(nn.Module):
    """timm's Attention: one qkv Linear, heads split by reshape/permute,
    q·kᵀ as a batched MatMul (or Einsum), softmax on the last axis."""

    def __init__(self, dim, heads, einsum=False):
        super().__init__()
        self.heads, self.scale, self.einsum = heads, (dim // heads) ** -0.5, einsum
        self.qkv, self.proj = nn.Linear(dim, dim * 3), nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        if self.einsum:
            attn = torch.einsum("bhid,bhjd->bhij", q, k) * self.scale
            x = torch.einsum("bhij,bhjd->bhid", attn.softmax(dim=-1), v)
        else:
            attn = (q @ k.transpose(-2, -1)) * self.scale
            x = attn.softmax(dim=-1) @ v
        return self.proj(x.transpose(1, 2).reshape(B, N, C))


class TimmBlock(nn.Module):
    def __init__(self, dim, heads, act, norm, einsum=False):
        super().__init__()
        self.norm1, self.attn = norm(dim), TimmAttention(dim, heads, einsum)
        self.norm2 = norm(dim)
        self.fc1, self.act, self.fc2 = nn.Linear(dim, 4 * dim), act, nn.Linear(4 * dim, dim)
        self.gamma1, self.gamma2 = nn.Parameter(torch.ones(dim)), nn.Parameter(torch.ones(dim))  # LayerScale

    def forward(self, x):
        x = x + self.gamma1 * self.attn(self.norm1(x))
        return x + self.gamma2 * self.fc2(self.act(self.fc1(self.norm2(x))))


class SiLU(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class QuickGELU(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class TimmViT(nn.Module):
    """A timm-style ViT: conv patch embedding, class token and position
    embedding, pre-norm blocks with LayerScale, a GELU-tanh MLP (or another
    activation), final norm, mean pooling over the patch tokens plus the
    class token, linear head."""

    def __init__(self, image=32, patch=8, dim=32, depth=2, heads=2, act=None, norm=None, einsum=False):
        super().__init__()
        act = act or nn.GELU(approximate="tanh")
        norm = norm or ManualLayerNorm
        self.patch = nn.Conv2d(3, dim, patch, patch)
        n = (image // patch) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, n + 1, dim))
        self.blocks = nn.Sequential(*[TimmBlock(dim, heads, act, norm, einsum) for _ in range(depth)])
        self.norm, self.head = norm(dim), nn.Linear(dim, 10)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        x = self.norm(self.blocks(x))
        return self.head(x[:, 1:].mean(1) + x[:, 0])


class CBAM(nn.Module):
    """Channel attention (mean and max over space, a shared MLP, Sigmoid)
    then spatial attention (mean and max over channels, a 7×7 Conv)."""

    def __init__(self, c):
        super().__init__()
        self.mlp = nn.Sequential(nn.Conv2d(c, c // 2, 1), nn.ReLU(), nn.Conv2d(c // 2, c, 1))
        self.spatial = nn.Conv2d(2, 1, 7, padding=3)

    def forward(self, x):
        a = self.mlp(x.mean((2, 3), keepdim=True)) + self.mlp(x.amax((2, 3), keepdim=True))
        x = x * torch.sigmoid(a)
        s = torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], dim=1)
        return x * torch.sigmoid(self.spatial(s))


class MiscCNN(nn.Module):
    """CNN layers of the issue's list in one network: PReLU,
    InstanceNorm2d, GroupNorm, ConvTranspose2d, PixelShuffle
    (DepthToSpace), PixelUnshuffle, Mish, ELU, SELU,
    CELU, Softplus, Hardtanh, CBAM (ReduceMax), F.normalize (ReduceL2),
    torch.maximum/minimum, torch.where, repeat (Tile), a SiLU written out,
    log_softmax; outputs the logits and a top-5/argmax head. (PyTorch
    exports nn.LocalResponseNorm as pooling with an If, not as LRN: LRN has
    single-operator fixtures.)"""

    def __init__(self, topk=True):
        super().__init__()
        self.topk = topk
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.prelu = nn.PReLU(16)
        self.inorm = nn.InstanceNorm2d(16, affine=True)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1, groups=2)
        self.gnorm = nn.GroupNorm(4, 32)
        self.up = nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1)
        self.shuffle_conv = nn.Conv2d(16, 32, 1)
        self.down = nn.Conv2d(32, 32, 3, stride=2, padding=1)
        self.cbam = CBAM(32)
        self.prelu1 = nn.PReLU()
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        x = self.inorm(self.prelu(self.stem(x)))
        x = F.mish(self.gnorm(self.conv2(x)))
        x = F.elu(self.up(x))                                # 2x up
        x = F.pixel_shuffle(self.shuffle_conv(x), 2)          # 32 → 8 channels, 2x up
        x = F.pixel_unshuffle(x, 2)                           # 8 → 32 channels, back
        x = F.selu(x)
        x = F.celu(self.down(x), alpha=1.5) + F.softplus(x[:, :, ::2, ::2])
        x = torch.maximum(F.hardtanh(x, -2.0, 2.0), torch.minimum(x, x * 0.5))
        x = self.cbam(torch.where(x > 0, x, 0.1 * x))
        x = x * torch.sigmoid(x)
        v = F.normalize(x.mean((2, 3)), dim=1)
        v = torch.cat([v, self.prelu1(v.repeat(1, 2)[:, 16:48])], dim=1)
        logits = self.fc(v)
        if not self.topk:
            return logits
        top, idx = logits.topk(5, dim=1)
        return logits, F.log_softmax(logits, dim=1), top, idx, logits.argmax(dim=1)


def small_convnext_timm():
    """ConvNeXt blocks as timm writes them (channels_first LayerNorm2d as
    in the downsampling layers, Linear MLP on NHWC, GELU-tanh)."""
    class Block(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
            self.norm = ManualLayerNorm(dim)
            self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
            self.gamma = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            y = self.dw(x).permute(0, 2, 3, 1)
            y = self.fc2(F.gelu(self.fc1(self.norm(y)), approximate="tanh")) * self.gamma
            return x + y.permute(0, 3, 1, 2)

    layers = [nn.Conv2d(3, 16, 4, 4), ManualLayerNorm(16, channels_first=True), Block(16),
              ManualLayerNorm(16, channels_first=True), nn.Conv2d(16, 32, 2, 2), Block(32)]
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.LayerNorm(32), nn.Linear(32, 10))


# name, constructor, input (C,H,W), opsets, description.
ALL4 = [11, 13, 14, 17]
ZOO = [
    ("alexnet_small", SmallAlexNet, (3, 224, 224), [17],
     "torchvision AlexNet layers, widths ÷4–8, 32-unit classifier; 224×224 so that AdaptiveAvgPool2d((6,6)) applies"),
    ("convnext_small", small_convnext, (3, 64, 64), [11, 14],
     "torchvision ConvNeXt (CNBlock: depthwise 7×7, Permute, LayerNorm, Linear, GELU, layer scale), dims 8/16/32/64, depths 1/1/2/1; "
     "LayerNorm decomposed (opset 17: see convnext_bench)"),
    ("efficientnet_b0_small", small_efficientnet_b0, (3, 64, 64), [13],
     "torchvision EfficientNet-B0 config, width 0.15, depth 0.34: SiLU (Sigmoid·Mul), squeeze-excitation"),
    ("efficientnet_v2_small", small_efficientnet_v2, (3, 64, 64), [14],
     "torchvision EfficientNet with FusedMBConv and MBConv stages (EfficientNetV2's blocks), widths 8–32"),
    ("googlenet_small", small_googlenet, (3, 64, 64), [11],
     "torchvision GoogLeNet, every width ÷8, transform_input: Gather/Mul/Add/Concat, MaxPool ceil_mode"),
    ("inception_v3_small", small_inception_v3, (3, 75, 75), [17],
     "torchvision Inception3, every width ÷16, transform_input, 75×75 (its smallest input): asymmetric 1×7/7×1 convs, AveragePool with pads"),
    ("mnasnet_small", small_mnasnet, (3, 64, 64), [11],
     "torchvision MNASNet(alpha=0.1), last 1×1 conv 1280→128 wide: ReduceMean head"),
    ("mobilenet_v3_small", lambda: small_mobilenet_v3("mobilenet_v3_small", 0.2), (3, 64, 64), [13, 14],
     "torchvision MobileNetV3-Small, width 0.2: HardSigmoid·Mul before opset 14, HardSwish from 14; SE with HardSigmoid"),
    ("mobilenet_v3_large", lambda: small_mobilenet_v3("mobilenet_v3_large", 0.15), (3, 64, 64), [17],
     "torchvision MobileNetV3-Large, width 0.15"),
    ("regnet_x_small", lambda: small_regnet(False), (3, 64, 64), [11],
     "torchvision RegNet (X: no SE), depth 6, w_0 16, grouped 3×3 convs (group width 8)"),
    ("regnet_y_small", lambda: small_regnet(True), (3, 64, 64), [14],
     "torchvision RegNet (Y: SE with ReLU/Sigmoid), depth 6, w_0 16, group width 8"),
    ("resnet50_small", lambda: SmallBottleneckResNet([1, 1, 1, 1]), (3, 64, 64), [14],
     "torchvision ResNet with Bottleneck blocks (ResNet-50's), widths ÷8"),
    ("resnext_small", lambda: SmallBottleneckResNet([1, 1, 1, 1], groups=8, width_per_group=8), (3, 64, 64), [17],
     "torchvision ResNeXt (Bottleneck, groups 8, width_per_group 8), widths ÷8"),
    ("wide_resnet_small", lambda: SmallBottleneckResNet([1, 1, 1, 1], width_per_group=128, div=16), (3, 64, 64), [13],
     "torchvision Wide ResNet (Bottleneck, width_per_group 128), widths ÷16"),
    ("vgg11_small", small_vgg11, (3, 112, 112), [11],
     "torchvision VGG (no BatchNorm), widths 8–32, four max-pools to 7×7"),
    ("swin_small", small_swin, (3, 56, 72), [11, 13, 17],
     "torchvision Swin Transformer (v1), patch 4, embed 16, depths 2/2, heads 2/4, window 4; 56×72 pads 14×18 patches to 16×20; "
     "shifted windows (roll as Slice/Concat), attention mask (ScatterND/Equal/Where, folded), relative position bias (Gather)"),
    ("vit_small", small_vit, (3, 32, 32), ALL4,
     "torchvision VisionTransformer: patch 8, 2 layers, 2 heads, hidden 32: class token (Expand, Concat), nn.MultiheadAttention, GELU (Erf)"),
    ("maxvit_small", small_maxvit, (3, 64, 64), [13, 17],
     "torchvision MaxViT (MBConv with SE, block and grid attention, relative position bias: Einsum), 2 stages, partition 4"),
    ("timm_vit", lambda: TimmViT(), (3, 32, 32), ALL4,
     "timm-style ViT: written-out LayerNorm (decomposed at every opset), qkv Linear + reshape/permute/unbind, q·kᵀ MatMul, "
     "GELU tanh approximation, LayerScale, mean + class token pooling"),
    ("timm_vit_einsum", lambda: TimmViT(act=SiLU(), einsum=True, norm=nn.LayerNorm), (3, 32, 32), [13, 17],
     "timm-style ViT with Einsum attention (bhid,bhjd->bhij), SiLU written out, nn.LayerNorm"),
    ("timm_vit_quickgelu", lambda: TimmViT(act=QuickGELU(), norm=nn.LayerNorm, depth=1), (3, 32, 32), [14],
     "timm-style ViT block with QuickGELU (x·sigmoid(1.702x))"),
    ("timm_convnext", small_convnext_timm, (3, 64, 64), [11, 17],
     "timm-style ConvNeXt: channels-first LayerNorm2d written out (normalised over axis 1), GELU tanh"),
    ("misc_cnn", MiscCNN, (3, 32, 32), [13, 17],
     "PReLU, InstanceNorm, GroupNorm, ConvTranspose, PixelShuffle/Unshuffle, LRN, Mish, ELU/SELU/CELU, Softplus, Hardtanh, "
     "CBAM (ReduceMax), F.normalize (ReduceL2), Max/Min, Where, Tile, SiLU, LogSoftmax, TopK and ArgMax outputs"),
]

# The speed references of issue #18 (BenchmarkModels, nn/ortbench): a small
# ViT and a ConvNeXt at 224×224, random weights, opset 17.
BENCH = [
    ("vit_bench", lambda: small_vit(224, 16, 4, 3, 96, 384), (3, 224, 224), [17],
     "torchvision VisionTransformer at 224×224: patch 16 (197 tokens), 4 layers, 3 heads, hidden 96, MLP 384 (the benchmark ViT)"),
    ("convnext_bench", lambda: small_convnext((24, 48, 96, 192), (1, 1, 2, 1)), (3, 224, 224), [17],
     "torchvision ConvNeXt at 224×224, dims 24/48/96/192, depths 1/1/2/1 (the benchmark ConvNeXt)"),
]
