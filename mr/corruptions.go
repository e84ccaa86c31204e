package mr

// corruptions returns the registry entries of Hendrycks & Dietterich's
// common corruptions (ICLR 2019; ImageNet-C, CIFAR-10-C), in the order of
// the reference's make_cifar_c.py: the benchmark corruptions, then the
// extra ones. Names are the reference's function names, except
// brightness_c, whose plain name is amt's additive Brightness. Each takes
// the CIFAR-10-C constants on images of at most 32×32 and ImageNet-C's on
// larger ones.
//
// Frost is left out: it blends crops of the reference's six frost
// photographs (ImageNet-C/create_c/frost1.png … frost6.jpg, 2 MB), which
// amt does not ship, and a frost made from other pictures would be
// another corruption under the same name.
func corruptions() []Info {
	return []Info{
		corruption("gaussian_noise", "x + N(0, c²) per value (ImageNet-C gaussian noise; random)", func(s int) Relation { return GaussianNoise{s} }),
		corruption("shot_noise", "Poisson(x·c)/c per value (ImageNet-C shot noise; random)", func(s int) Relation { return ShotNoise{s} }),
		corruption("impulse_noise", "salt and pepper on a fraction c of values (ImageNet-C impulse noise; random)", func(s int) Relation { return ImpulseNoise{s} }),
		corruption("defocus_blur", "disk kernel (ImageNet-C defocus blur)", func(s int) Relation { return DefocusBlur{s} }),
		corruption("glass_blur", "blur, local pixel shuffle, blur (ImageNet-C glass blur; random)", func(s int) Relation { return GlassBlur{s} }),
		corruption("motion_blur", "one-sided Gaussian streak at a random angle (ImageNet-C motion blur; ImageMagick restated; random)", func(s int) Relation { return MotionBlur{s} }),
		corruption("zoom_blur", "mean of central zooms (ImageNet-C zoom blur)", func(s int) Relation { return ZoomBlur{s} }),
		corruption("snow", "motion-blurred flakes over a brightened image (ImageNet-C snow; random)", func(s int) Relation { return Snow{s} }),
		corruption("fog", "plasma-fractal haze (ImageNet-C fog; random)", func(s int) Relation { return Fog{s} }),
		corruption("brightness_c", "HSV value + c (ImageNet-C brightness)", func(s int) Relation { return BrightnessC{s} }),
		corruption("contrast", "(x - mean)·c + mean (ImageNet-C contrast)", func(s int) Relation { return Contrast{s} }),
		corruption("elastic_transform", "random affine, then smooth random displacements (ImageNet-C elastic; random)", func(s int) Relation { return ElasticTransform{s} }),
		corruption("pixelate", "Pillow BOX down to c·size and back (ImageNet-C pixelate)", func(s int) Relation { return Pixelate{s} }),
		corruption("jpeg_compression", "libjpeg round trip at quality q (ImageNet-C JPEG)", func(s int) Relation { return JPEGCompression{s} }),
		corruption("speckle_noise", "x + x·N(0, c²) per value (ImageNet-C extra; random)", func(s int) Relation { return SpeckleNoise{s} }),
		corruption("gaussian_blur", "Gaussian blur of σ, border nearest (ImageNet-C extra)", func(s int) Relation { return GaussianBlur{s} }),
		corruption("spatter", "water or mud splashes (ImageNet-C extra; OpenCV steps restated; random)", func(s int) Relation { return Spatter{s} }),
		corruption("saturate", "HSV saturation·a + b (ImageNet-C extra)", func(s int) Relation { return Saturate{s} }),
	}
}
