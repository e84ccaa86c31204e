// Package ortbench holds the side-by-side benchmark of amt's ONNX engine
// against ONNX Runtime. It has no Go API: the harness is ortbench.mjs (a
// Node script timing onnxruntime-node on the workloads of the Go benchmark
// BenchmarkModels in package nn) and compare.sh (runs both in one go and
// prints ms/img and the ratio amt/ORT per workload):
//
//	bash nn/ortbench/compare.sh
//
// The package's tests check that the two workload lists agree and that
// the comparison table is computed correctly; they need neither Node nor
// ONNX Runtime. See README.md.
package ortbench
