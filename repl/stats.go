package repl

import (
	"encoding/json"

	"github.com/cubelinux/cube"
)

// labelStats gives .stats one shape whichever evaluator answered: the
// daemon's STATS is already package cube's labelled report (snake_case,
// units in the names: latency_p50_us), and an embedded store's
// statistics, which the Evaluator hands over as its Go types in JSON
// (SyncLatency, "P50": 1474559 nanoseconds), are turned into that same
// report. Anything else is shown as it came.
func labelStats(js []byte) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(js, &top) != nil {
		return js
	}
	var out any
	if _, ok := top["Store"]; ok {
		var st cube.Stats
		if json.Unmarshal(js, &st) != nil {
			return js
		}
		out = st.Report()
	} else if raw, ok := top["Namespace"]; ok {
		var probe map[string]json.RawMessage
		if json.Unmarshal(raw, &probe) != nil || probe["Name"] == nil {
			return js
		}
		var v struct {
			Namespace cube.NamespaceInfo
			Programs  []cube.ProgramInfo
		}
		if json.Unmarshal(js, &v) != nil {
			return js
		}
		out = cube.NamespaceReport{Namespace: cube.ReportNamespace(v.Namespace), Programs: cube.ReportPrograms(v.Programs)}
	} else {
		return js
	}
	b, err := json.Marshal(out)
	if err != nil {
		return js
	}
	return b
}
