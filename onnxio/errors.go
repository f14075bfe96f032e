package onnxio

import "errors"

// Errors returned by the functions of this package, wrapped with the
// operation, file, tensor or node concerned ("onnxio: load m.onnx: ...");
// test for them with errors.Is.
var (
	// ErrNotModel: the bytes are not an ONNX model (not protobuf, or protobuf
	// without the fields every model has).
	ErrNotModel = errors.New("not an ONNX model")
	// ErrTruncated: the file ends in the middle of a protobuf field.
	ErrTruncated = errors.New("truncated ONNX file")
	// ErrInvalid: the model parses but breaks an ONNX rule (duplicate or
	// undefined value names, tensor data that does not match its shape).
	ErrInvalid = errors.New("invalid ONNX model")
	// ErrExternalData: a tensor's external data is missing, short or outside
	// the model's folder.
	ErrExternalData = errors.New("external data")
	// ErrTooLarge: the model would exceed protobuf's 2 GB message limit.
	ErrTooLarge = errors.New("model exceeds protobuf's 2 GB limit")
	// ErrProtected: Save was asked to overwrite a protected file.
	ErrProtected = errors.New("refusing to overwrite a protected file")
)
