package main

import (
	"context"
	"errors"
)

// cmdOPE is a placeholder until its issue lands; it must be replaced.
func cmdOPE(_ context.Context, _ *cliEnv, _ []string) error {
	return errors.New("ope: not implemented yet")
}
