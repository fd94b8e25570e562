package dashboard

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Each snapshot.json is the current snapshot: one a slot later is the
// next one, not the one encoded before.
func TestSnapshotJSONIsTheCurrentOne(t *testing.T) {
	d, f, _ := newFakeDashboard(t)
	get := func() uint64 {
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/snapshot.json", nil))
		return decode(t, rec.Body.Bytes()).Seq
	}
	if seq := get(); seq != 1 {
		t.Fatalf("first snapshot.json: seq %d, want 1", seq)
	}
	f.Advance(time.Second)
	if seq := get(); seq != 2 {
		t.Errorf("snapshot.json a slot later: seq %d, want 2", seq)
	}
}
