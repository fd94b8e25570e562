package redistest

import "testing"

// primaries reads a CLUSTER SHARDS reply, in RESP2 (arrays of pairs) and
// RESP3 (maps) form, as the slot ranges and their online primary, sorted:
// replicas and a failed primary are not owners.
func TestPrimaries(t *testing.T) {
	node := func(port int64, role, health string) []any {
		return []any{"id", "x", "port", port, "ip", "127.0.0.1", "role", role, "health", health}
	}
	resp2 := []any{
		[]any{"slots", []any{int64(5461), int64(10922)}, "nodes", []any{node(7002, "replica", "online"), node(7001, "master", "online")}},
		[]any{"slots", []any{int64(0), int64(5460)}, "nodes", []any{node(7000, "master", "online"), node(7003, "replica", "online")}},
		[]any{"slots", []any{int64(10923), int64(16383)}, "nodes", []any{node(7004, "master", "fail")}},
	}
	const want = "[0 5460]127.0.0.1:7000 [10923 16383] [5461 10922]127.0.0.1:7001"
	if got := primaries(resp2); got != want {
		t.Errorf("RESP2: primaries = %q, want %q", got, want)
	}
	asMap3 := func(kv []any) map[any]any {
		m := map[any]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	var resp3 []any
	for _, sh := range resp2 {
		m := asMap3(sh.([]any))
		var nodes []any
		for _, n := range m["nodes"].([]any) {
			nodes = append(nodes, asMap3(n.([]any)))
		}
		m["nodes"] = nodes
		resp3 = append(resp3, m)
	}
	if got := primaries(resp3); got != want {
		t.Errorf("RESP3: primaries = %q, want %q", got, want)
	}
	if got := primaries("ERR"); got != "" {
		t.Errorf("primaries of a non-array = %q, want \"\"", got)
	}
	if got := primaries([]any{[]any{"slots"}}); got != "<nil>" {
		t.Errorf("primaries of a shard of an odd length = %q, want its slots unknown, no owner", got)
	}
}
