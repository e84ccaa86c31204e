package main

import (
	"context"
	"errors"
)

// cmdPlot is a placeholder until its issue lands; it must be replaced.
func cmdPlot(_ context.Context, _ *cliEnv, _ []string) error {
	return errors.New("plot: not implemented yet")
}
