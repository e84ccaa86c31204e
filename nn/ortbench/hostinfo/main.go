// Command hostinfo prints what compare.sh reports beside its timings: the
// host's CPU, the kernel set amt runs (AMT_KERNELS or the best available),
// the measured FMA peak of each assembly kernel set, the cross-core round
// trip (kernels.CoreRoundTrip: what a hand-off between the kernels'
// threads costs, with two threads or more), and the floating-point
// operations of one image of every workload (counted by nn/kernels while
// the model runs once), from which compare.sh derives GFLOP/s and % of
// peak. Run from the repository:
//
//	go run ./nn/ortbench/hostinfo [-threads N] [-run REGEXP]
//
// Lines starting with # are for people; the others are for compare.sh:
//
//	available SET...       the kernel sets this CPU and build run
//	sets SET...            the assembly kernel sets among them (else generic)
//	peak FLOP/S            the host's FMA peak on -threads threads
//	flops WORKLOAD FLOP    per image
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/cpu"
	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/nn/kernels"
	"github.com/amt-dev/amt/nn/ortbench"
)

func main() {
	threads := flag.Int("threads", runtime.GOMAXPROCS(0), "threads of the FMA peak measurement (the benchmarks' thread count)")
	run := flag.String("run", ".", "only workloads whose name matches this regexp")
	flag.Parse()
	if err := hostinfo(*threads, *run); err != nil {
		fmt.Fprintln(os.Stderr, "hostinfo:", err)
		os.Exit(1)
	}
}

func hostinfo(threads int, run string) error {
	re, err := regexp.Compile(run)
	if err != nil {
		return fmt.Errorf("-run %q: %v", run, err)
	}
	if threads < 1 {
		return fmt.Errorf("-threads %d: want at least 1", threads)
	}
	fmt.Printf("# host: %s, %d CPUs (GOMAXPROCS %d); x86 features: %s\n", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), features())
	var avail []string
	for _, s := range kernels.KernelSets() {
		if s.Available {
			avail = append(avail, s.Name)
		}
	}
	how := "the best available"
	if env := os.Getenv(kernels.KernelSetEnv); env != "" {
		how = kernels.KernelSetEnv + "=" + env
	}
	fmt.Printf("# amt kernel set: %s (%s; available here: %s)\n", kernels.KernelSet(), how, strings.Join(avail, ", "))
	var asm []string
	for _, s := range avail {
		if s != "generic" {
			asm = append(asm, s)
		}
	}
	if len(asm) == 0 {
		asm = []string{"generic"}
	}
	fmt.Printf("available %s\n", strings.Join(avail, " "))
	fmt.Printf("sets %s\n", strings.Join(asm, " "))
	peak := 0.0
	var peaks []string
	for _, s := range avail {
		p, err := kernels.PeakFLOPS(s, threads, 300*time.Millisecond)
		if err != nil {
			continue // the portable set has no FMA loop
		}
		peaks = append(peaks, fmt.Sprintf("%s %.1f", s, p/1e9))
		peak = max(peak, p)
	}
	if peak > 0 {
		fmt.Printf("# FMA peak on %d threads, measured (GFLOP/s per thread-CPU-second, summed): %s\n", threads, strings.Join(peaks, ", "))
		fmt.Printf("peak %.4g\n", peak)
	} else {
		fmt.Printf("# FMA peak: not measured (no assembly kernels in this build or on this CPU)\n")
	}
	if rt, err := kernels.CoreRoundTrip(5, 20*time.Millisecond); err == nil {
		fmt.Printf("# cross-core round trip (two threads passing a cache line back and forth), median of 5: %.0f ns\n", float64(rt.Nanoseconds()))
	}

	ws, err := ortbench.Workloads()
	if err != nil {
		return err
	}
	assets, err := sharedpath.Find("assets")
	if err != nil {
		return err
	}
	repo, err := repoRoot()
	if err != nil {
		return err
	}
	models := map[string]uint64{}
	for _, w := range ws {
		if !re.MatchString(w.Name) {
			continue
		}
		f, ok := models[w.Model]
		if !ok {
			if f, err = imageFlops(w.ModelPath(assets, repo), w.CHW); err != nil {
				return fmt.Errorf("%s: %v", w.Name, err)
			}
			models[w.Model] = f
		}
		fmt.Printf("flops %s %d\n", w.Name, f)
	}
	return nil
}

// repoRoot returns the repository's root folder: the working directory or
// the nearest parent holding go.mod.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod in %s or a parent folder: run from the repository", wd)
		}
	}
}

// imageFlops runs the model once on one image and returns the operations
// nn/kernels counted.
func imageFlops(path string, chw []int) (uint64, error) {
	m, err := nn.Load(path)
	if err != nil {
		return 0, err
	}
	shape := append([]int{1}, chw...)
	n := 1
	for _, d := range shape {
		n *= d
	}
	r := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, n)
	for i := range x {
		x[i] = r.Float32()*4 - 2
	}
	in := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x))
	if _, err := m.Run(in); err != nil { // builds the graph
		return 0, err
	}
	f0 := kernels.Flops()
	if _, err := m.Run(in); err != nil {
		return 0, err
	}
	return kernels.Flops() - f0, nil
}

// cpuModel returns the CPU's model name (and family/model numbers on x86
// Linux), from /proc/cpuinfo where there is one.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	info := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			break // first processor only
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			info[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	name := info["model name"]
	if name == "" {
		return runtime.GOARCH
	}
	if fam, mod := info["cpu family"], info["model"]; fam != "" && mod != "" {
		name += fmt.Sprintf(" (family %s, model %s)", fam, mod)
	}
	return name
}

// features lists the vector features that decide the kernel sets.
func features() string {
	if runtime.GOARCH != "amd64" {
		return "n/a (" + runtime.GOARCH + ")"
	}
	var fs []string
	for _, f := range []struct {
		name string
		has  bool
	}{
		{"AVX-512F", cpu.X86.HasAVX512F}, {"AVX-512VL", cpu.X86.HasAVX512VL}, {"AVX-512BW", cpu.X86.HasAVX512BW},
		{"AVX2", cpu.X86.HasAVX2}, {"FMA", cpu.X86.HasFMA},
	} {
		if f.has {
			fs = append(fs, f.name)
		}
	}
	if len(fs) == 0 {
		return "none of AVX2, FMA, AVX-512"
	}
	return strings.Join(fs, " ")
}
