//go:build !amd64.v3

package results_test

// fusedMultiplyAdd reports a build in which the Go compiler fuses
// multiply-adds (GOAMD64=v3 or later): the figures' rasteriser then rounds
// differently from the build that drew the committed PNGs.
const fusedMultiplyAdd = false
