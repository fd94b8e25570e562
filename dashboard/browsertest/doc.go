// Package browsertest tests package dashboard's page in a real browser:
// headless Chromium (Debian's package, /usr/bin/chromium) driven by
// chromedp over the scenario of examples/dashboard. It is a module of its
// own, so that the core's go.mod stays free of chromedp. It has tests
// only:
//
//	go test ./...                                        # needs chromium
//	go test -run Browser -v -screenshot ../../docs/dashboard.png   # the README's screenshot, and the page's timings
package browsertest
