// Package inspect summarizes an ONNX classifier without running it: opset,
// inputs and outputs, op counts, parameters, the layers (output-channel
// groups, graph.Neurons) with their members, the classifier layer, the
// nodes that have no gradient rule (autodiff.UnsupportedNodes) and how many
// Identity-shared initializers untying would split. `unlearn inspect`
// prints it; any Go program can call it.
//
// # API
//
//	rep, err := inspect.File("model.onnx", inspect.Options{})
//	inspect.WriteText(os.Stdout, rep, false)  // the terminal table
//	json.MarshalIndent(rep, "", "  ")          // schema unlearn.inspect/v1
//
// # Conventions
//
// Report is the JSON document of schema unlearn.inspect/v1 (Schema,
// docs/FORMATS.md documents the fields): every field keeps its name and meaning
// within the version. Nothing here needs ONNX Runtime: the model is decoded
// (onnxio) and analysed (graph, train/autodiff) only. The model file is
// never modified. Errors name the model's path; a classifier name that
// matches no layer is a *ClassifierError, so that a command can report it
// as a usage error. Only WriteText writes, to the io.Writer it is given.
package inspect
