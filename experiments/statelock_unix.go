//go:build unix

package experiments

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes flock(2)'s exclusive lock of the file at path without
// waiting; held is false when another process has it.
func tryLock(path string) (unlock func(), held bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(lockNote()), 0)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, true, nil
}
