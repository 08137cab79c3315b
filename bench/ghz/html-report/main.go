// ghz-html renders ghz's own HTML report from a report ghz wrote with -O json, so each
// cell needs one ghz run, not one per output format (ghz writes one format per run).
// It uses ghz's printer package: the page is exactly what `ghz -O html` would write.
//
// ghz embeds every call in the page (for its download buttons); calls beyond
// -max-details are dropped to keep pages small. The charts and tables use ghz's
// summary fields (histogram, latency distribution, status codes), which stay complete.
//
// Usage: ghz-html [-max-details N] report.json report.html
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/bojand/ghz/printer"
	"github.com/bojand/ghz/runner"
)

func main() {
	maxDetails := flag.Int("max-details", 10000, "calls kept in the page's raw data")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: ghz-html [-max-details N] report.json report.html")
		os.Exit(2)
	}
	if err := render(flag.Arg(0), flag.Arg(1), *maxDetails); err != nil {
		fmt.Fprintln(os.Stderr, "ghz-html:", err)
		os.Exit(1)
	}
}

func render(in, out string, maxDetails int) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var report runner.Report
	if err := json.Unmarshal(data, &report); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if maxDetails >= 0 && len(report.Details) > maxDetails {
		report.Details = report.Details[:maxDetails]
	}
	file, err := os.Create(out)
	if err != nil {
		return err
	}
	defer file.Close()
	return (&printer.ReportPrinter{Out: file, Report: &report}).Print("html")
}
