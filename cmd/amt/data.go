package main

import (
	"context"
	"errors"
)

// cmdData is a placeholder until its issue lands; it must be replaced.
func cmdData(_ context.Context, _ *cliEnv, _ []string) error {
	return errors.New("data: not implemented yet")
}
