package nn

import (
	"errors"
	"reflect"
	"unsafe"

	"gorgonia.org/gorgonia"
)

// tapeGorgonia is the gorgonia version whose unexported run loop runTape
// calls (go.mod pins it; TestTapeGorgoniaVersion fails when it changes, so
// that tapeRunall's signature below is checked again against the new
// source before anything runs on it).
const tapeGorgonia = "v0.9.18"

// tapeRunall is gorgonia's (*tapeMachine).runall (vm_tape.go): it executes
// the machine's program from its program counter on, then sends one value
// on doneChan, or the first error on errChan and stops. The receiver is
// the first argument.
//
//go:linkname tapeRunall gorgonia.org/gorgonia.(*tapeMachine).runall
func tapeRunall(m unsafe.Pointer, errChan chan error, doneChan chan struct{})

// tape runs a tape machine's program on the calling goroutine.
//
// gorgonia's RunAll locks the caller to its OS thread (for CUDA contexts,
// which amt does not use: its gpu build tag runs its own ops), starts the
// program on a new goroutine and waits for it: two hand-offs between OS
// threads per run, each of which wakes a sleeping thread. On a 2-vCPU
// virtual machine (AMD EPYC Zen 4, Firecracker) they took 14–33 µs from
// RunAll's start to the first op and 13–33 µs from the last op to its
// return. Running the loop directly (BenchmarkModels, interleaved rounds,
// medians, ms/img): ResNet-20 at batch 1 on two cores 0.587 → 0.544, on
// one 0.774 → 0.690, at batch 60 0.423 → 0.369; SqueezeNet-224 at batch
// 1 3.02 → 2.60, at batch 60 2.83 → 2.57 (a batch runs image by image or
// in groups, a run each). Calling the run loop directly also brings a
// panic in an op back to the caller (instance.run recovers it) instead of
// ending the process.
//
// What RunAll does besides (the external engines' DoWork, closures queued
// for gradients bound to dual values) does nothing for a machine made by
// gorgonia.NewTapeMachine(g) without options, as instance builds it; newTape
// returns a tape only for such a machine of the pinned gorgonia's type,
// and a machine of another type runs through RunAll.
type tape struct {
	vm   gorgonia.VM
	m    unsafe.Pointer // the *tapeMachine, nil: run through RunAll
	err  chan error
	done chan struct{}
}

// newTape wraps a machine made by gorgonia.NewTapeMachine(g).
func newTape(vm gorgonia.VM) *tape {
	t := &tape{vm: vm, err: make(chan error, 1), done: make(chan struct{}, 1)}
	if v := reflect.ValueOf(vm); v.Kind() == reflect.Pointer &&
		v.Type().Elem().PkgPath() == "gorgonia.org/gorgonia" && v.Type().Elem().Name() == "tapeMachine" {
		t.m = v.UnsafePointer()
	}
	return t
}

// run runs the program once; the machine's Reset must follow, as after
// RunAll.
func (t *tape) run() error {
	if t.m == nil {
		return t.vm.RunAll()
	}
	tapeRunall(t.m, t.err, t.done)
	select {
	case err := <-t.err:
		return err
	case <-t.done:
		return nil
	default:
		return errors.New("gorgonia's run loop returned without a result")
	}
}
