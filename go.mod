module github.com/unlearn-tool/unlearn

go 1.26.8

require (
	github.com/urfave/cli/v2 v2.27.7
	github.com/yalue/onnxruntime_go v1.27.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
)
