package main

import (
	"context"
	"errors"
)

// cmdTransform is a placeholder until its issue lands; it must be replaced.
func cmdTransform(_ context.Context, _ *cliEnv, _ []string) error {
	return errors.New("transform: not implemented yet")
}
