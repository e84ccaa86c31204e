package experiments

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Agent state is shared between runs (state:, amt check's state folder),
// and two runs that continue from one state file at the same time would
// each save their own continuation, the second silently discarding the
// first's learning. So a run holds the lock of a state file from loading
// it to saving it again: an advisory lock (flock on Unix, an exclusively
// created file elsewhere) on <state file>.lock. A second run that finds it
// held does not wait (a CI job would hang behind another for as long as
// that one runs): it fails at once with a one-line error naming the lock
// file and its holder, before it has run anything, and can be retried.
// The lock file itself is left in place (it holds the last holder's pid
// and start time); with flock the kernel releases the lock when its
// process ends, however it ends.

// ErrStateLocked is the error of a state file another run holds.
var ErrStateLocked = errors.New("agent state in use by another amt run")

// stateLockSuffix names a state file's lock file.
const stateLockSuffix = ".lock"

// lockState takes the lock of the state file at path (its folder is
// created) and returns its release.
func lockState(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	lp := path + stateLockSuffix
	unlock, held, err := tryLock(lp)
	if err != nil {
		return nil, fmt.Errorf("locking agent state %s: %w", path, err)
	}
	if !held {
		holder := ""
		if b, err := os.ReadFile(lp); err == nil && len(b) < 200 {
			holder = " (" + strings.TrimSpace(string(b)) + ")"
		}
		return nil, fmt.Errorf("%w: %s is locked by %s%s; two runs continuing one state would lose one's learning: wait for the other to finish and run again",
			ErrStateLocked, path, lp, holder)
	}
	return unlock, nil
}

// lockNote is what a lock file says of its holder.
func lockNote() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
}
