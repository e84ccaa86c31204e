package main

import (
	"context"
	"errors"
)

// cmdMRs is a placeholder until its issue lands; it must be replaced.
func cmdMRs(_ context.Context, _ *cliEnv, _ []string) error {
	return errors.New("mrs: not implemented yet")
}
