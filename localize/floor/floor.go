// Package floor is the depth floor of DEL's localization: the smallest
// layer depth a floor lets the localization reset, and the recommended
// default's floor. It sits apart from package localize, which links the
// training engine (and so ONNX Runtime), so that a package that only
// describes a model (inspect) can state what the default would reset.
package floor

import "math"

// Recommended is the depth floor of the recommended default
// (unlearn.Recommended): DEL never resets a layer in the first 40 % of the
// network's depth.
const Recommended = 0.4

// MinDepth is the smallest layer depth eligible under depth floor f in a
// network whose deepest layer is at maxDepth (graph.NeuronMap.MaxDepth):
// ⌈f·maxDepth⌉, 0 for f ≤ 0.
func MinDepth(f float64, maxDepth int) int {
	if f <= 0 {
		return 0
	}
	return int(math.Ceil(f*float64(maxDepth) - 1e-9))
}
