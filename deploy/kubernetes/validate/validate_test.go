// Package validate checks amt's Kubernetes manifests (deploy/kubernetes):
// every document decodes strictly into the real Kubernetes API types
// (k8s.io/api batch/v1 and core/v1), the Jobs mean what their comments
// say, and their pods, run as local processes with the environment,
// arguments and working folder the kubelet would give them, produce the
// table of a single-process sweep.
//
// It is a module of its own so that amt's module does not depend on the
// Kubernetes API: make test runs it (cd deploy/kubernetes/validate && go
// test ./...).
package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// manifestDir holds the manifests; repoRoot is amt's module.
var (
	manifestDir = ".."
	repoRoot    = filepath.Join("..", "..", "..")
)

// manifests are the decoded documents of every manifest file.
type manifests struct {
	jobs       map[string]*batchv1.Job
	configMaps map[string]*corev1.ConfigMap
	claims     map[string]*corev1.PersistentVolumeClaim
}

// decodeStrict decodes one YAML document into v, refusing unknown fields
// and duplicate keys (YAML → JSON strictly, then encoding/json with
// DisallowUnknownFields into the typed API struct).
func decodeStrict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// loadManifests decodes every document of deploy/kubernetes/*.yaml by its
// apiVersion and kind.
func loadManifests(t *testing.T) manifests {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", manifestDir, err)
	}
	m := manifests{jobs: map[string]*batchv1.Job{}, configMaps: map[string]*corev1.ConfigMap{}, claims: map[string]*corev1.PersistentVolumeClaim{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for k, doc := range docSep.Split(string(b), -1) {
			where := fmt.Sprintf("%s, document %d", filepath.Base(f), k+1)
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			var name string
			switch head.APIVersion + " " + head.Kind {
			case "batch/v1 Job":
				var job batchv1.Job
				err, name = decodeStrict([]byte(doc), &job), job.Name
				m.jobs[name] = &job
			case "v1 ConfigMap":
				var cm corev1.ConfigMap
				err, name = decodeStrict([]byte(doc), &cm), cm.Name
				m.configMaps[name] = &cm
			case "v1 PersistentVolumeClaim":
				var pvc corev1.PersistentVolumeClaim
				err, name = decodeStrict([]byte(doc), &pvc), pvc.Name
				m.claims[name] = &pvc
			default:
				t.Fatalf("%s: unexpected %q %q", where, head.APIVersion, head.Kind)
			}
			if err != nil {
				t.Fatalf("%s (%s): %v", where, head.Kind, err)
			}
			if name == "" {
				t.Fatalf("%s: a %s without a name", where, head.Kind)
			}
		}
	}
	return m
}

// Strict decoding refuses what a typo would make.
func TestDecodeStrictRefuses(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: batch/v1\nkind: Job\nspec:\n  completionMod: Indexed\n",
		"apiVersion: batch/v1\nkind: Job\nspec:\n  completions: 4\n  completions: 5\n",
		"apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      containers:\n        - name: x\n          arg: [a]\n",
		"apiVersion: batch/v1\nkind: Job\nspec:\n  completions: four\n",
	} {
		if err := decodeStrict([]byte(doc), new(batchv1.Job)); err == nil {
			t.Errorf("decoded:\n%s", doc)
		}
	}
}

// The manifests decode strictly, and the Jobs are what their comments say.
func TestManifests(t *testing.T) {
	m := loadManifests(t)
	sweep, merge := m.jobs["amt-sweep"], m.jobs["amt-merge"]
	if sweep == nil || merge == nil || m.configMaps["amt-experiment"] == nil || m.claims["amt-work"] == nil {
		t.Fatalf("want the Jobs amt-sweep and amt-merge, the ConfigMap amt-experiment, the claim amt-work; have %d jobs, %d config maps, %d claims",
			len(m.jobs), len(m.configMaps), len(m.claims))
	}
	if _, ok := m.configMaps["amt-experiment"].Data["experiment.yaml"]; !ok {
		t.Error("the ConfigMap has no experiment.yaml")
	}
	if pvc := m.claims["amt-work"]; len(pvc.Spec.AccessModes) != 1 || pvc.Spec.AccessModes[0] != corev1.ReadWriteMany {
		t.Errorf("the shared volume's access modes %v, want ReadWriteMany (shards on several nodes write it)", pvc.Spec.AccessModes)
	}

	s := sweep.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || s.Completions == nil || s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex < 1 {
		t.Fatalf("amt-sweep: want an Indexed Job with completions and backoffLimitPerIndex ≥ 1: %+v", s)
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Error("amt-sweep: podFailurePolicy and backoffLimitPerIndex need restartPolicy Never")
	}
	if len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("amt-sweep: %d containers", len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	if got := policyAction(s.PodFailurePolicy, c.Name, 2); got != batchv1.PodFailurePolicyActionFailIndex {
		t.Errorf("amt-sweep: exit status 2 (a configuration error) gives %q, want FailIndex", got)
	}
	if got := policyAction(s.PodFailurePolicy, c.Name, 1); got != "" {
		t.Errorf("amt-sweep: exit status 1 (a failure) gives %q, want a retry", got)
	}
	want := fmt.Sprintf("$(JOB_COMPLETION_INDEX)/%d", *s.Completions)
	if k := index(c.Args, "-shard"); k < 0 || k+1 == len(c.Args) || c.Args[k+1] != want {
		t.Errorf("amt-sweep: args %q: want -shard %s (the N equal to completions)", c.Args, want)
	}
	if env := envVar(c, "JOB_COMPLETION_INDEX"); env == nil || env.ValueFrom == nil || env.ValueFrom.FieldRef == nil ||
		env.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("amt-sweep: JOB_COMPLETION_INDEX is not the completion index annotation: %+v", env)
	}
	for _, j := range []*batchv1.Job{sweep, merge} {
		checkVolumes(t, j, m)
	}

	ms := merge.Spec
	if got := policyAction(ms.PodFailurePolicy, "", 2); got != batchv1.PodFailurePolicyActionFailJob {
		t.Errorf("amt-merge: exit status 2 gives %q, want FailJob", got)
	}
	var steps []string
	for _, mc := range append(append([]corev1.Container{}, ms.Template.Spec.InitContainers...), ms.Template.Spec.Containers...) {
		steps = append(steps, strings.Join(mc.Args, " "))
	}
	config := c.Args[index(c.Args, "-config")+1]
	if wantSteps := []string{"sweep -config " + config + " -merge", "run -config " + config, "plot -config " + config}; strings.Join(steps, "|") != strings.Join(wantSteps, "|") {
		t.Errorf("amt-merge: steps %q, want %q", steps, wantSteps)
	}
}

// policyAction returns the action of the first rule of p that matches a
// pod whose container exited with status code ("" for none: the pod
// counts against the backoff limit and is retried).
func policyAction(p *batchv1.PodFailurePolicy, container string, code int32) batchv1.PodFailurePolicyAction {
	if p == nil {
		return ""
	}
	for _, r := range p.Rules {
		e := r.OnExitCodes
		if e == nil || e.ContainerName != nil && *e.ContainerName != container {
			continue
		}
		in := false
		for _, v := range e.Values {
			in = in || v == code
		}
		if in == (e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) {
			return r.Action
		}
	}
	return ""
}

func index(args []string, s string) int {
	for k, a := range args {
		if a == s {
			return k
		}
	}
	return -1
}

func envVar(c corev1.Container, name string) *corev1.EnvVar {
	for k := range c.Env {
		if c.Env[k].Name == name {
			return &c.Env[k]
		}
	}
	return nil
}

// checkVolumes checks that every mount names a volume of the pod and that
// the volumes name the manifests' claim and ConfigMap.
func checkVolumes(t *testing.T, j *batchv1.Job, m manifests) {
	t.Helper()
	vols := map[string]corev1.Volume{}
	for _, v := range j.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
		switch {
		case v.PersistentVolumeClaim != nil && m.claims[v.PersistentVolumeClaim.ClaimName] == nil:
			t.Errorf("%s: volume %s: no claim %s", j.Name, v.Name, v.PersistentVolumeClaim.ClaimName)
		case v.ConfigMap != nil && m.configMaps[v.ConfigMap.Name] == nil:
			t.Errorf("%s: volume %s: no ConfigMap %s", j.Name, v.Name, v.ConfigMap.Name)
		}
	}
	spec := j.Spec.Template.Spec
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		for _, vm := range c.VolumeMounts {
			if _, ok := vols[vm.Name]; !ok {
				t.Errorf("%s: container %s mounts the unknown volume %s", j.Name, c.Name, vm.Name)
			}
		}
		if len(c.Command) != 1 || !strings.HasSuffix(c.Command[0], "/amt") {
			t.Errorf("%s: container %s runs %q, want amt", j.Name, c.Name, c.Command)
		}
	}
}

// A pod run as a local process.

// node is a local stand-in for a node: the folders the pods' volumes
// mount, and the amt binary.
type node struct {
	amt    string
	mounts map[string]string // mount path → local folder
}

// expand replaces $(VAR) with the variable's value as the kubelet does
// for command and args ($$ escapes a $; an undefined reference stays).
func expand(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			b.WriteByte('$')
			i++
		case strings.HasPrefix(s[i:], "$("):
			if end := strings.IndexByte(s[i:], ')'); end > 0 {
				if v, ok := env[s[i+2:i+end]]; ok {
					b.WriteString(v)
					i += end
					continue
				}
			}
			b.WriteByte('$')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// local maps a path inside the pod to the node's folder.
func (n node) local(p string) string {
	for mp, dir := range n.mounts {
		if p == mp || strings.HasPrefix(p, mp+"/") {
			return dir + p[len(mp):]
		}
	}
	return p
}

// run runs container c of a pod with completion index idx (-1: not an
// Indexed Job's pod) and returns its exit status and output.
func (n node) run(ctx context.Context, c corev1.Container, idx int) (int, string, error) {
	env := map[string]string{}
	var environ []string
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
			e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['batch.kubernetes.io/job-completion-index']" && idx >= 0:
			v = strconv.Itoa(idx)
		case e.ValueFrom != nil:
			return 0, "", fmt.Errorf("container %s: env %s: a source this test does not know", c.Name, e.Name)
		default:
			v = n.local(expand(v, env))
		}
		env[e.Name] = v
		environ = append(environ, e.Name+"="+v)
	}
	if idx >= 0 {
		if _, ok := env["JOB_COMPLETION_INDEX"]; !ok { // the Job controller's
			env["JOB_COMPLETION_INDEX"] = strconv.Itoa(idx)
			environ = append(environ, "JOB_COMPLETION_INDEX="+strconv.Itoa(idx))
		}
	}
	var args []string
	for _, a := range c.Args {
		args = append(args, n.local(expand(a, env)))
	}
	cmd := exec.CommandContext(ctx, n.amt, args...)
	cmd.Dir = n.local(c.WorkingDir)
	// A pod has only its own environment; PATH and HOME as an image's.
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=/tmp", "CI=" + os.Getenv("CI")}, environ...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out), nil
	}
	return 0, string(out), err
}

// assetsDir finds amt's shared assets as amt's tests do ($AMT_SHARED, or
// shared/assets beside the working folder or a parent); it skips the test
// when they are missing, but under CI=true.
func assetsDir(t *testing.T) string {
	t.Helper()
	if root := os.Getenv("AMT_SHARED"); root != "" {
		return filepath.Join(root, "assets")
	}
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "shared", "assets")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		if filepath.Dir(dir) == dir {
			if os.Getenv("CI") == "true" {
				t.Fatal("shared assets not found")
			}
			t.Skip("shared assets not found")
		}
		dir = filepath.Dir(dir)
	}
}

// buildAmt builds amt's command into dir.
func buildAmt(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "amt")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/amt")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/amt: %v\n%s", err, out)
	}
	return bin
}

// testConfig is the experiment the local pods run in place of the
// ConfigMap's: 24 images, ResNet-20, pHash features, so it takes seconds.
const testConfig = `name: k8s-test
case_study: classification
mode: replay
data: {format: cifar10, path: cifar10/test_batch_first1017.bin, limit: 24}
sut: {model: models/cifar10_resnet20.onnx, input_size: 32}
features: {kind: phash}
action_set: hierarchical
agents: [cover, random]
seeds: 1-2
`

// The pods of the Indexed Job, run as N local processes at the same time
// with the environment the kubelet gives them, then the merge Job's
// containers in order, produce the table of a single-process sweep; a
// configuration error exits with the status the failure policy turns into
// FailIndex.
func TestPodsAsLocalProcesses(t *testing.T) {
	m := loadManifests(t)
	sweep, merge := m.jobs["amt-sweep"], m.jobs["amt-merge"]
	if sweep == nil || merge == nil {
		t.Fatal("no amt-sweep or amt-merge Job")
	}
	assets := assetsDir(t)
	tmp := t.TempDir()
	bin := buildAmt(t, tmp)
	newNode := func(name, config string) node {
		t.Helper()
		work, cfg := filepath.Join(tmp, name, "work"), filepath.Join(tmp, name, "config")
		for _, d := range []string{work, cfg} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		// The shared volume holds the assets; the ConfigMap the experiment.
		if err := os.Symlink(assets, filepath.Join(work, "assets")); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cfg, "experiment.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		n := node{amt: bin, mounts: map[string]string{}}
		for _, vm := range sweep.Spec.Template.Spec.Containers[0].VolumeMounts {
			switch vm.Name {
			case "work":
				n.mounts[vm.MountPath] = work
			case "experiment":
				n.mounts[vm.MountPath] = cfg
			default:
				t.Fatalf("volume %s: this test does not know it", vm.Name)
			}
		}
		return n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// The pods of the Indexed Job, all at once.
	start := time.Now()
	pods := newNode("pods", testConfig)
	shards := int(*sweep.Spec.Completions)
	var wg sync.WaitGroup
	codes, outs, errs := make([]int, shards), make([]string, shards), make([]error, shards)
	for k := 0; k < shards; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			codes[k], outs[k], errs[k] = pods.run(ctx, sweep.Spec.Template.Spec.Containers[0], k)
		}(k)
	}
	wg.Wait()
	for k := range codes {
		if errs[k] != nil || codes[k] != 0 || !strings.Contains(outs[k], fmt.Sprintf("sweep shard %d/%d: ", k, shards)) {
			t.Fatalf("pod %d: exit %d, %v:\n%s", k, codes[k], errs[k], outs[k])
		}
	}
	spec := merge.Spec.Template.Spec
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		code, out, err := pods.run(ctx, c, -1)
		if err != nil || code != 0 {
			t.Fatalf("merge Job, container %s: exit %d, %v:\n%s", c.Name, code, err, out)
		}
	}
	t.Logf("%d pods and the merge job as local processes: %v", shards, time.Since(start).Round(time.Millisecond))
	results := filepath.Join(pods.mounts["/work"], "results", "k8s-test")
	for _, f := range []string{"cover/summary.json", "report.md"} {
		if _, err := os.Stat(filepath.Join(results, f)); err != nil {
			t.Error(err)
		}
	}

	// One process, as amt sweep runs without a cluster.
	one := newNode("one", testConfig)
	c := sweep.Spec.Template.Spec.Containers[0]
	c.Args = c.Args[:index(c.Args, "-shard")]
	c.Env = nil
	for _, e := range sweep.Spec.Template.Spec.Containers[0].Env {
		if e.Name != "JOB_COMPLETION_INDEX" {
			c.Env = append(c.Env, e)
		}
	}
	if code, out, err := one.run(ctx, c, -1); err != nil || code != 0 {
		t.Fatalf("single-process sweep: exit %d, %v:\n%s", code, err, out)
	}
	for _, f := range []string{"sweep.csv"} {
		a, err1 := os.ReadFile(filepath.Join(one.mounts["/work"], "results", "k8s-test", f))
		b, err2 := os.ReadFile(filepath.Join(results, f))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s of the pods differs from a single process's (%v, %v)", f, err1, err2)
		}
	}

	// A configuration error: exit status 2, which fails the index at once.
	bad := newNode("bad", strings.Replace(testConfig, "action_set:", "action_sett:", 1))
	code, out, err := bad.run(ctx, sweep.Spec.Template.Spec.Containers[0], 1)
	if err != nil || code != 2 || !strings.Contains(out, "action_sett") {
		t.Fatalf("pod with a configuration error: exit %d, %v:\n%s", code, err, out)
	}
	if a := policyAction(sweep.Spec.PodFailurePolicy, "amt", int32(code)); a != batchv1.PodFailurePolicyActionFailIndex {
		t.Errorf("a configuration error's pod: action %q, want FailIndex", a)
	}
	// The merge before the shards: status 1, retried.
	early := newNode("early", testConfig)
	code, out, err = early.run(ctx, spec.InitContainers[0], -1)
	if err != nil || code != 1 || !strings.Contains(out, "nothing to merge") {
		t.Fatalf("merge without shards: exit %d, %v:\n%s", code, err, out)
	}
	if a := policyAction(merge.Spec.PodFailurePolicy, "merge", int32(code)); a != "" {
		t.Errorf("a merge without shards: action %q, want a retry", a)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "1", "B": "x"}
	for in, want := range map[string]string{
		"$(A)/4": "1/4", "$(A)$(B)": "1x", "$$(A)": "$(A)", "$(C)": "$(C)", "a$": "a$", "$(A": "$(A", "$$": "$",
	} {
		if got := expand(in, env); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
