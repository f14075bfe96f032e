// Package onnxio reads and writes ONNX models (https://onnx.ai) as graph IR.
// It is the only package of unlearn that imports protobuf code: the messages
// are generated from onnxpb/onnx.proto (see gen.go), and package graph stays
// protobuf-free. It does no graph analysis (package graph) and runs nothing;
// docs/DESIGN.md "Decisions" says why the project owns this layer.
//
// # Reading
//
// Load reads a file; Decode parses bytes. Every decoded object (graph.Model,
// Graph, Node, Attribute, Value, Tensor) keeps what it was decoded from in its
// Ext field; OriginalProto returns that message. Names may be used before the
// node that defines them (decoding resolves them in a second pass), and
// subgraphs (If, Loop, Scan) get Parent set, with outer-scope names resolved
// to the enclosing graph's Value. Initializers also listed as graph inputs
// (IR version < 4) stay in both lists, as graph.AddInitializer does. Sparse
// initializers are defined as values (graph.DefineOpaque) but not modelled.
//
// Tensor data ends up in graph.Tensor.Raw as little-endian bytes, whatever
// the file used: raw_data (used in place, not copied: Raw shares memory with
// the message in Ext), the typed fields (float_data; int32_data for int8,
// int16, int32, uint8, uint16, bool, float16 and bfloat16; int64_data;
// double_data; uint64_data for uint32 and uint64), or external data. String
// tensors fill Tensor.Strings. Types the IR cannot hold (4-bit types) keep
// Raw nil and their data in the original message.
//
// External data locations are relative to the model's folder; a location
// that leaves it (absolute, "..", or a symbolic link pointing out) is
// refused.
//
// # Writing
//
// Encode serializes a model; Save writes it to a file. An object with an Ext
// from this package is written from a copy of its original message with the
// fields the IR models overwritten when they changed, so everything the IR
// does not model survives a round trip: unknown fields, fields of newer ONNX
// versions, functions, training info, sparse initializers, type denotations,
// non-tensor types. A tensor whose data is byte-identical to what was decoded
// (checked with a length and hash fingerprint) keeps its original encoding;
// changed data is written as raw_data. Objects built by code (no Ext) are
// written from scratch.
//
// Save is atomic: the model (and its external data file) is written to a
// temporary file in the destination folder, synced and renamed; on any error
// the temporary files are removed. SaveOptions.Protect names files that must
// never be overwritten (the input model). With SaveOptions.ExternalData,
// initializers of SizeThreshold bytes or more go to one data file beside the
// model. Protobuf's C++ and Python runtimes (hence ONNX Runtime and the onnx
// package) refuse messages over 2 GB, so a larger model is always saved with
// external data; Encode refuses it. Go's runtime has no such limit, so Load
// reads such files.
//
// # Safetensors
//
// Safetensors(m, SafetensorsOptions) renders a model's initializers as a
// safetensors file (internal/safetensors) under their names, PyTorch's
// state_dict keys when the export kept them, after untying the tensors the
// exporter shared behind Identity nodes (graph.UntieIdentityInitializers),
// so that load_state_dict picks up the weights (`unlearn export`). Names
// the exporter made up (GeneratedName) are skipped unless
// SafetensorsOptions.All; a trainable parameter under such a name is a
// *GeneratedParamsError, since PyTorch could not load it by name.
//
// # Errors
//
// Errors name the file, tensor or node concerned and wrap one of ErrNotModel,
// ErrTruncated, ErrInvalid, ErrExternalData, ErrTooLarge or ErrProtected.
package onnxio
