package main

import (
	"errors"
	"fmt"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/nn"
)

// amt's exit statuses, the same for every command (README, "The command
// line"). Schedulers rely on them: a Kubernetes Job's podFailurePolicy
// fails an index without retrying it on status 2
// (deploy/kubernetes/sweep-job.yaml), since rerunning the same command
// cannot help.
const (
	// exitOK: the command did what was asked.
	exitOK = 0
	// exitFailure: the command ran and failed (an unreadable file, a
	// model that fails, a merge that lacks shards, an interruption);
	// rerunning may succeed.
	exitFailure = 1
	// exitUsage: the command line or the configuration is wrong (an
	// unknown command or flag, a bad flag value, a configuration error
	// file:line:column: key: problem); it fails the same way every time.
	exitUsage = 2
)

// A usageError is a mistake in the command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitCode returns the exit status for a command's error. A model file
// that fails to load, or an image over the pixel budget, is a failure even
// where the configuration names it (a ConfigError at sut.model wrapping an
// *nn.ModelError, at data.max_pixels wrapping a *data.TooLargeError): the
// file's content is at fault, not the configuration, as for any hostile
// file.
func exitCode(err error) int {
	var cfgErr *experiments.ConfigError
	var uErr usageError
	var modelErr *nn.ModelError
	var tooLarge *data.TooLargeError
	var own *exitStatusError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &own): // amt check's: 2 for any error, 1 for a failing check
		return own.code
	case errors.As(err, &modelErr), errors.As(err, &tooLarge):
		return exitFailure
	case errors.Is(err, errUsage), errors.As(err, &uErr), errors.As(err, &cfgErr):
		return exitUsage
	default:
		return exitFailure
	}
}
