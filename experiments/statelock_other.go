//go:build !unix

package experiments

import (
	"errors"
	"io/fs"
	"os"
)

// tryLock creates the file at path exclusively; held is false when it
// exists. Without flock a lock left by a killed process stays until it is
// deleted (the error names it).
func tryLock(path string) (unlock func(), held bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	f.WriteString(lockNote())
	f.Close()
	return func() { os.Remove(path) }, true, nil
}
