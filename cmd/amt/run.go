package main

import (
	"context"
	"errors"
)

// cmdRun is a placeholder until its issue lands; it must be replaced.
func cmdRun(_ context.Context, _ *cliEnv, _ []string) error {
	return errors.New("run: not implemented yet")
}
