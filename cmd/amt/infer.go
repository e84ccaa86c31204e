package main

import (
	"context"
	"errors"
)

// cmdInfer is a placeholder until its issue lands; it must be replaced.
func cmdInfer(_ context.Context, _ *cliEnv, _ []string) error {
	return errors.New("infer: not implemented yet")
}
