// Command amt is the adaptive metamorphic testing toolkit's command line.
//
// Usage:
//
//	amt <command> [flags] [arguments]
//
// Run "amt help" for the list of commands and "amt <command> -h" for the
// flags of one. The commands only parse flags and wire packages together;
// everything worth testing lives in the packages.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand of amt.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv carries the process's standard streams so commands can be tested.
type cliEnv struct {
	stdout, stderr io.Writer
}

// commands lists every subcommand in the order "amt help" prints them.
func commands() []command {
	return []command{
		{"run", "run an experiment config (adaptive metamorphic testing, online or replay)", cmdRun},
		{"sweep", "compute (or export) the exhaustive verdict table of an experiment", cmdSweep},
		{"replay", "run bandit agents against a precomputed verdict table (seconds, not hours)", cmdReplay},
		{"plot", "redraw an experiment's figures and tables from its saved results", cmdPlot},
		{"ope", "off-policy evaluation of logged bandit decisions", cmdOPE},
		{"infer", "run an ONNX model on raw float32 input and write its outputs", cmdInfer},
		{"transform", "apply metamorphic relations to an image file", cmdTransform},
		{"config", "print the configuration reference (-ref), or check configuration files", cmdConfig},
		{"mrs", "list metamorphic relations, their parameters, the built-in scenarios and rewards", cmdMRs},
		{"data", "fetch or inspect data sets (amt data fetch|inspect)", cmdData},
		{"version", "print amt's version", cmdVersion},
	}
}

// version is amt's release version.
const version = "0.1.0-dev"

func cmdVersion(_ context.Context, env *cliEnv, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("version takes no arguments, got %q", args)
	}
	_, err := fmt.Fprintln(env.stdout, "amt", version)
	return err
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "amt: adaptive metamorphic testing with contextual bandits")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: amt <command> [flags] [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "  help       print this list")
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "amt <command> -h" for a command's flags.`)
}

// errUsage marks an error already explained by printed usage.
var errUsage = errors.New("usage")

// dispatch runs the subcommand named by args[0].
func dispatch(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 {
		usage(env.stderr)
		return errUsage
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "-help" || name == "--help" {
		usage(env.stdout)
		return nil
	}
	for _, c := range commands() {
		if c.name == name {
			err := c.run(ctx, env, args[1:])
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	usage(env.stderr)
	return fmt.Errorf("unknown command %q", name)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cliEnv{stdout: os.Stdout, stderr: os.Stderr}
	if err := dispatch(ctx, env, os.Args[1:]); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "amt:", err)
		}
		os.Exit(1)
	}
}

// newFlagSet returns a flag set for a subcommand that reports errors
// instead of exiting and prints its usage to env.stderr.
func newFlagSet(env *cliEnv, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("amt "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "Usage: amt %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}
