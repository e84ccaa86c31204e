package sharedpath

import (
	"os"
	"testing"
)

// ForTest returns Find(sub) for a test. When the shared folder is missing
// the test is skipped, except under CI (CI=true), where it fails: CI always
// has shared/ beside the clone, so a missing folder there is a real error.
func ForTest(t testing.TB, sub string) string {
	t.Helper()
	p, err := Find(sub)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("shared data: %v", err)
		}
		t.Skipf("shared data not available: %v", err)
	}
	return p
}
