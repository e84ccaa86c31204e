//go:build !gpu

package cuda

// Built reports whether this binary has GPU support (the gpu build tag).
const Built = false

// Device is a GPU; without the gpu build tag none can be opened.
type Device struct{}

// Open fails with ErrNotBuilt: this binary was built without -tags gpu.
func Open(Config) (*Device, error) { return nil, ErrNotBuilt }

// Close does nothing.
func (*Device) Close() error { return nil }

// Name returns "".
func (*Device) Name() string { return "" }
