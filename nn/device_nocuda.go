//go:build !gpu

package nn

import "github.com/amt-dev/amt/nn/cuda"

// openCUDA fails: this binary was built without the gpu tag.
func openCUDA(cuda.Config, func(string, ...any), []string) (accel, error) {
	return nil, cuda.ErrNotBuilt
}
