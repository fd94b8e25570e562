package resilienceotel

// WaitValues waits until the instruments of the guards' values that the
// last collection saw first are made and their callback registered.
func (m *Metrics) WaitValues() { m.values.done.Wait() }
