package main

import (
	"strings"
	"testing"
)

// amt help COMMAND prints that command's usage (as amt COMMAND -h), not
// the list of commands.
func TestHelpCommand(t *testing.T) {
	stdout, stderr, err := runCmd(t, "help", "run")
	if err != nil || !strings.HasPrefix(stderr, "Usage: amt run -config FILE") || strings.Contains(stdout+stderr, "Commands:") {
		t.Errorf("amt help run: %v\nstdout %q\nstderr %q", err, stdout, stderr)
	}
	if _, _, err := runCmd(t, "help", "nosuch"); err == nil || !strings.HasSuffix(err.Error(), `unknown command "nosuch"`) {
		t.Errorf("amt help nosuch: %v", err)
	}
	if _, _, err := runCmd(t, "sweeep"); err == nil || !strings.Contains(err.Error(), `unknown command "sweeep"; did you mean "sweep"?`) {
		t.Errorf("amt sweeep: %v", err)
	}
	if stdout, _, err := runCmd(t, "help"); err != nil || !strings.Contains(stdout, "Commands:") {
		t.Errorf("amt help: %v %q", err, stdout)
	}
}
