package onnxio

// onnxpb/onnx.pb.go is generated from onnxpb/onnx.proto and committed. To
// regenerate it, install protoc (Debian: protobuf-compiler) and protoc-gen-go
// v1.36.12, the version of google.golang.org/protobuf in go.mod:
//
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//
// then run `go generate ./onnxio` with protoc-gen-go on PATH.

//go:generate protoc --proto_path=onnxpb --go_out=onnxpb --go_opt=paths=source_relative onnx.proto
