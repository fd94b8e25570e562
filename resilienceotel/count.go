package resilienceotel

import "sync/atomic"

// countCell is a count read at collection.
type countCell struct{ n atomic.Int64 }

func (c *countCell) add()        { c.n.Add(1) }
func (c *countCell) load() int64 { return c.n.Load() }
