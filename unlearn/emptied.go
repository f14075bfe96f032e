package unlearn

import (
	"fmt"
	"strings"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/setting"
)

// emptiedShare is the share of a layer's output channels a reset may take
// before emptiedLayers warns.
const emptiedShare = 0.75

// emptiedLayers warns when a mask resets most output channels of a layer
// (at least emptiedShare of them) while a deeper layer stays partly frozen:
// the frozen layers were trained to read features that the reset replaced,
// and only the masked channels and the classifier can adapt. On the small
// ResNet of regimes/fashion-mnist, a DEL mask of 10 % that took 14 of
// the 16 stem channels left the model 7.6 points under the oracle's test
// accuracy after the fixed 3-epoch recipe (NOTES.md there). It returns
// nil when no layer is in that state. cls (the classifier, always trained
// whole) is not counted.
func emptiedLayers(nm *graph.NeuronMap, mask map[string][]bool, cls *graph.Layer) setting.Message {
	if mask == nil {
		return nil
	}
	type state struct {
		l          *graph.Layer
		reset, all int
	}
	var layers []state
	for _, l := range nm.Layers {
		if l == cls || l.Standalone || len(l.Members) == 0 || l.Channels == 0 {
			continue
		}
		w := l.Members[0]
		m := mask[w.Param.Name]
		n := 0
		for c := 0; c < l.Channels && m != nil; c++ {
			whole := true
			for i := range w.Elements(c) {
				if i >= len(m) || !m[i] {
					whole = false
					break
				}
			}
			if whole {
				n++
			}
		}
		layers = append(layers, state{l, n, l.Channels})
	}
	var emptied []string
	for _, s := range layers {
		if float64(s.reset) < emptiedShare*float64(s.all) {
			continue
		}
		frozenAfter := false
		for _, t := range layers {
			frozenAfter = frozenAfter || (t.l.Depth > s.l.Depth && t.reset < t.all)
		}
		if frozenAfter {
			emptied = append(emptied, fmt.Sprintf("%d of %d channels of %s", s.reset, s.all, s.l.Name))
		}
	}
	if len(emptied) == 0 {
		return nil
	}
	return setting.Msgf("the mask resets %s while deeper layers stay frozen: they must read re-initialised features, "+
		"and a fixed number of epochs may not bring the test accuracy back; compare it with the input model's, or use %s "+
		"(which trains until it is back), more %s or a smaller %s",
		strings.Join(emptied, ", "), setting.Use("schedule", ScheduleAuto), setting.Of("epochs"), setting.Of("budget"))
}
