package experiments

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateLock checks the state file lock (#34, class 5): a second
// holder is refused with ErrStateLocked naming the lock file and the
// holder's pid, and the lock is free again after the release.
func TestStateLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "cover", "seed-1.state")
	unlock, err := lockState(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockState(path)
	if !errors.Is(err, ErrStateLocked) || !strings.Contains(err.Error(), path+".lock") || !strings.Contains(err.Error(), "pid ") {
		t.Errorf("second lock: err = %v", err)
	}
	unlock()
	unlock2, err := lockState(path)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	unlock2()
}
