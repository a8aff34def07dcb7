package report

import "html/template"

// page is the report's HTML: one file, inline CSS and SVG, no scripts and no
// network, so it opens anywhere and archives with the run.
var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1.5em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.meta { color: #666; font-size: 0.9em; }
nav ul { columns: 2; font-size: 0.9em; }
figure { margin: 1.5em 0; page-break-inside: avoid; }
figure svg { width: 100%; height: auto; max-width: 980px; display: block; }
figcaption { font-size: 0.88em; color: #444; margin-top: 0.3em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0 1.4em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.55em; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; }
td:first-child, th:first-child { text-align: left; }
td.better { background: #e3f4e1; color: #1b5e20; }
td.worse { background: #fbe4e2; color: #8e1b10; }
td.same { background: #f2f2f2; color: #555; }
td.ref { font-weight: bold; }
.caption { font-size: 0.88em; color: #444; margin: 0.2em 0; }
.warnings { background: #fbe4e2; border: 1px solid #e0a09a; padding: 0.6em 1em; font-size: 0.9em; margin-bottom: 1em; }
.notes { background: #fff8e1; border: 1px solid #f0d890; padding: 0.6em 1em; font-size: 0.9em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">Generated {{.Generated.Format "2006-01-02 15:04 UTC"}} by cnperf{{if .Reference}} · reference: <b>{{.Reference}}</b>{{end}}{{if .Window}} · TCP receive window {{.Window}} bytes{{end}}{{if .Split}} · small/big split at {{.Split}} bytes{{end}}</p>
{{range .SectionTables "headline"}}{{template "table" .}}{{end}}<nav><ul>
{{range .Figures}}<li><a href="#{{.ID}}">{{.Title}}</a></li>
{{end}}{{range .Tables}}<li><a href="#{{.ID}}">{{.Title}}</a></li>
{{end}}</ul></nav>
{{if .Warnings}}<div class="warnings" id="warnings"><b>Measured on a busy machine</b><ul>
{{range .Warnings}}<li>{{.}}</li>
{{end}}</ul></div>{{end}}
{{if .Notes}}<div class="notes" id="notes"><b>What was skipped, and why</b><ul>
{{range .Notes}}<li>{{.}}</li>
{{end}}</ul></div>{{end}}
{{with .SectionTables "drivers"}}<h2 id="drivers">Drivers</h2>
{{range .}}{{template "table" .}}{{end}}
{{end}}<h2>Figures</h2>
{{range .Figures}}<figure id="{{.ID}}">
{{.SVG}}
<figcaption><b>{{.Title}}.</b> {{.Caption}}</figcaption>
</figure>
{{end}}
<h2>Tables</h2>
{{range .SectionTables ""}}{{template "table" .}}{{end}}
</body>
</html>
{{define "table"}}<section id="{{.ID}}">
<h3>{{.Title}}</h3>
<p class="caption">{{.Caption}}</p>
<table>
<thead><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</section>
{{end}}`))
