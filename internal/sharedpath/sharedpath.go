// Package sharedpath finds the project's read-only shared folder (models,
// data sets and golden reference outputs), which lives beside the checkout
// as ../shared and is never committed.
package sharedpath

import (
	"fmt"
	"os"
	"path/filepath"
)

// EnvVar names the environment variable that overrides the search: it is
// the path of the shared folder itself (the one holding assets/ and golden/).
const EnvVar = "AMT_SHARED"

// Find returns the path of sub (e.g. "assets" or "golden/mr") inside the
// shared folder. It uses $AMT_SHARED when set; otherwise it walks up from
// the working directory looking for a "shared/<sub>" directory beside each
// ancestor, so it works from the repository root and from package folders.
func Find(sub string) (string, error) {
	if root := os.Getenv(EnvVar); root != "" {
		p := filepath.Join(root, sub)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s=%q: %w", EnvVar, root, err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "shared", sub)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("shared folder %q not found beside the working directory or any parent; set $%s", sub, EnvVar)
		}
		dir = parent
	}
}
