package main

import (
	"context"
	"errors"
)

// cmdSweep is a placeholder until its issue lands; it must be replaced.
func cmdSweep(_ context.Context, _ *cliEnv, _ []string) error {
	return errors.New("sweep: not implemented yet")
}
