package main

import (
	"context"
	"errors"
)

// cmdReplay is a placeholder until its issue lands; it must be replaced.
func cmdReplay(_ context.Context, _ *cliEnv, _ []string) error {
	return errors.New("replay: not implemented yet")
}
