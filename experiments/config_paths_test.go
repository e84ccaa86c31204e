package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigFolderPaths checks that amt config refuses at once what used
// to fail late (#34, class 8): an output with a NUL byte, an output or
// state that is an existing file, and an agent id that is . or ...
func TestConfigFolderPaths(t *testing.T) {
	assets := fakeAssets(t)
	file := filepath.Join(t.TempDir(), "afile")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, tc := range []struct{ add, want string }{
		{"output: \"a\\0b\"\n", `output: "a\x00b" holds a NUL byte`},
		{"output: " + file + "\n", "output: " + file + " exists and is not a folder"},
		{"state: " + file + "\n", "state: " + file + " exists and is not a folder"},
	} {
		_, err := parseConfig([]byte(baseConfig+tc.add), "exp/test.yaml", assets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v\nwant an error containing %q", tc.add, err, tc.want)
		}
	}
	i := strings.Index(baseConfig, "agents:\n")
	j := strings.Index(baseConfig, "seeds:")
	_, err := parseConfig([]byte(baseConfig[:i]+"agents:\n  - {name: cover, id: ..}\n"+baseConfig[j:]), "exp/test.yaml", assets)
	if err == nil || !strings.Contains(err.Error(), "is not a plain name") {
		t.Errorf("agent id ..: %v", err)
	}
}
