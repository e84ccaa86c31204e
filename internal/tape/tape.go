// Package tape runs a gorgonia tape machine's program on the calling
// goroutine, for nn's model graphs and the bandit's network.
//
// gorgonia's RunAll locks the caller to its OS thread (for CUDA contexts,
// which amt does not use: its gpu build tag runs its own ops), starts the
// program on a new goroutine and waits for it: two hand-offs between OS
// threads per run, each of which wakes a sleeping thread, which on a
// virtual machine can take tens of microseconds, a noticeable part of a
// small model's run (a batch runs image by image or in groups, a run
// each). Running the program directly avoids both. A panic in an op also
// comes back to the caller, which may recover it, instead of ending the
// process.
//
// Runner calls the machine's own run loop, the unexported
// (*tapeMachine).runall, through go:linkname. What RunAll does besides
// (the external engines' DoWork, closures queued for gradients bound to
// dual values) does nothing for a machine made by gorgonia.NewTapeMachine
// without options, the only kind amt makes; a machine of another type runs
// through RunAll.
package tape

import (
	"errors"
	"reflect"
	"unsafe"

	"gorgonia.org/gorgonia"
)

// Gorgonia is the gorgonia version whose unexported run loop Runner calls
// (go.mod pins it; TestGorgoniaVersion fails when it changes, so that
// runall's signature below is checked again against the new source before
// anything runs on it).
const Gorgonia = "v0.9.18"

// runall is gorgonia's (*tapeMachine).runall (vm_tape.go): it executes the
// machine's program from its program counter on, then sends one value on
// doneChan, or the first error on errChan and stops. The receiver is the
// first argument.
//
//go:linkname runall gorgonia.org/gorgonia.(*tapeMachine).runall
func runall(m unsafe.Pointer, errChan chan error, doneChan chan struct{})

// Runner runs one machine's program, one run at a time.
type Runner struct {
	vm   gorgonia.VM
	m    unsafe.Pointer // the *tapeMachine; nil: run through RunAll
	err  chan error
	done chan struct{}
}

// New returns a Runner for a machine made by gorgonia.NewTapeMachine(g).
func New(vm gorgonia.VM) *Runner {
	r := &Runner{vm: vm, err: make(chan error, 1), done: make(chan struct{}, 1)}
	if v := reflect.ValueOf(vm); v.Kind() == reflect.Pointer &&
		v.Type().Elem().PkgPath() == "gorgonia.org/gorgonia" && v.Type().Elem().Name() == "tapeMachine" {
		r.m = v.UnsafePointer()
	}
	return r
}

// Direct reports whether Run calls the run loop directly (false: through
// RunAll).
func (r *Runner) Direct() bool { return r.m != nil }

// Run runs the program once, as RunAll does; the machine's Reset must
// come between two runs, as with RunAll.
func (r *Runner) Run() error {
	if r.m == nil {
		return r.vm.RunAll()
	}
	runall(r.m, r.err, r.done)
	select {
	case err := <-r.err:
		return err
	case <-r.done:
		return nil
	default:
		return errors.New("tape: gorgonia's run loop returned without a result")
	}
}
