module github.com/unlearn-tool/unlearn

go 1.26.8

require (
	github.com/owulveryck/onnx-go v0.5.0
	github.com/urfave/cli/v2 v2.27.7
	github.com/yalue/onnxruntime_go v1.27.0
	gonum.org/v1/gonum v0.17.0
	google.golang.org/protobuf v1.36.12
	gorgonia.org/tensor v0.9.3
)

require (
	github.com/chewxy/hm v1.0.0 // indirect
	github.com/chewxy/math32 v1.0.4 // indirect
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/gogo/protobuf v1.3.0 // indirect
	github.com/golang/protobuf v1.5.0 // indirect
	github.com/google/flatbuffers v1.11.0 // indirect
	github.com/pkg/errors v0.8.1 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	github.com/xtgo/set v1.0.0 // indirect
	gorgonia.org/vecf32 v0.9.0 // indirect
	gorgonia.org/vecf64 v0.9.0 // indirect
)
