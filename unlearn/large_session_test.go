package unlearn

import (
	"context"
	"os"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
)

// A model over protobuf's 2 GB limit reaches ONNX Runtime through a
// temporary folder with external data (onnxrt.NewSessionForModel) and is
// copied the same way (onnxio.Clone): the training engine, the proxies'
// scratch copy and the classifiers all take that path. With the limit
// lowered to 100 KiB, the small ResNet (BN in training form, so the
// classifiers copy it into inference form; a 1 % mask, so the training graph
// holds the frozen weights as initializers and is over the limit too) must
// give bit for bit the result it gives through in-memory buffers, and leave
// TMPDIR empty.
func TestRunOverSizeLimit(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
	forget, retain := every(d.forget, 4), every(d.retain, 12)
	run := func() (map[string][]float32, *Result) {
		m := loadModel(t, "resnet_small_train.onnx")
		res, err := Run(context.Background(), "rft", Input{Model: m, Data: d.ds, Forget: forget, Retain: retain, Mask: delMask(t, m, "resnet_small_train_del_scores.npz", 0.01)},
			Config{Runtime: testRuntime, LR: 0.02, Epochs: 1, Proxies: ProxyConfig{Track: true, NoMIA: true}})
		if err != nil {
			t.Fatal(err)
		}
		return initValues(t, m), res
	}
	want, wr := run()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	restore := onnxio.LimitForTest(100 << 10)
	got, gr := run()
	restore()
	for name, v := range want {
		if !bitsEqual(v, got[name]) {
			t.Errorf("%s differs through the large-model path", name)
		}
	}
	if withoutMIA(wr.Proxies.After) != withoutMIA(gr.Proxies.After) {
		t.Errorf("proxies %+v, through the large-model path %+v", wr.Proxies.After, gr.Proxies.After)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}
