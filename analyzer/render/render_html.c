/*
 * render_html.c - `report --html FILE`: one self-contained page (no network
 * reference: styles, script and data are inline, charts are inline SVG, so
 * it opens offline, prints, and tests can read its DOM).  It holds, per
 * process, one memory chart per device and a copy lane (render_svg.c), the
 * hover data (per bucket the split by holder and the largest live
 * allocations with their sites) and the findings with the text report's
 * content; selecting a finding highlights its time range in the charts.
 * Its size is bounded by processes x devices x CP_SER_N buckets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp_series.h"
#include "render_html.h"

/* A JSON string safe inside <script>: no '<', '>' or '&' left as such. */
static void cp_js_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

static const char cp_css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;color:#222;background:#fff}"
    "h1{font-size:20px}h2{font-size:17px;margin-top:28px}h3{font-size:15px;margin:14px 0 4px}"
    ".chart{display:block;margin:2px 0}.frame{fill:#fafafa;stroke:#ccc}"
    ".ax{font-size:10px;fill:#666}.ct{font-size:11px;fill:#333}"
    ".peak{fill:none;stroke:#333;stroke-width:.8}.cap{stroke:#d62728;stroke-dasharray:5 3}"
    ".blocked{fill:none;stroke:#000;stroke-width:1}.range{fill:#ffcc00;opacity:.22}"
    ".range.fragmentation{fill:#ff7f0e}.hl{fill:#1f77b4;opacity:0;pointer-events:none}"
    ".hl.on{opacity:.25}.oom line{stroke:#d62728;stroke-width:1.5}.oom path{fill:#d62728}"
    ".cursor{stroke:#000;stroke-width:.5;visibility:hidden}"
    ".legend span{display:inline-block;margin-right:14px;font-size:12px}"
    ".legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}"
    "#tip{position:fixed;display:none;background:#fff;border:1px solid #999;padding:6px 8px;"
    "font-size:12px;max-width:520px;box-shadow:0 2px 6px #0003;pointer-events:none}"
    ".finding{border-left:4px solid #888;padding:4px 10px;margin:10px 0;cursor:pointer}"
    ".finding.error{border-color:#d62728}.finding.warning{border-color:#e8a200}"
    ".finding.info{border-color:#4e79a7}.finding.selected{background:#eef5ff}"
    ".finding .sev{font-weight:bold;text-transform:uppercase;font-size:12px}"
    ".finding pre{white-space:pre-wrap;margin:4px 0;font-size:12.5px}"
    ".sites td{padding:0 8px 0 0;font-size:12.5px;vertical-align:top}"
    ".when{color:#666;font-size:12px}";

/* Hover and selection.  Reads the data block, writes nothing outside the
 * page, and marks the body data-ready="1" once it has run, with
 * data-ready-ms: milliseconds from the navigation's start (reading the
 * file, parsing the page and its charts, this script), which the pictures
 * benchmark reads apart from the browser's own start-up. */
static const char cp_js[] =
    "(function(){var D=JSON.parse(document.getElementById('cp-data').textContent);"
    "var tip=document.getElementById('tip');"
    "function fb(b){var u=['B','KiB','MiB','GiB','TiB'],i=0;while(b>=1024&&i<4){b/=1024;i++}"
    "return (i?b.toFixed(2):b)+' '+u[i]}"
    "function row(t,txt){var d=document.createElement('div');d.textContent=txt;t.appendChild(d)}"
    "Array.prototype.forEach.call(document.querySelectorAll('svg.chart'),function(svg){"
    "var c=D.charts[+svg.getAttribute('data-chart')];var cur=svg.querySelector('.cursor');"
    "svg.addEventListener('mousemove',function(ev){var r=svg.getBoundingClientRect();"
    "var x=(ev.clientX-r.left)*D.W/r.width;if(x<D.x0){tip.style.display='none';return}"
    "var t=(x-D.x0)/(D.W-D.x0)*D.span;var i=Math.floor((t-c.t0)/c.w);"
    "if(i<0||i>=c.n){tip.style.display='none';return}"
    "cur.setAttribute('x1',x);cur.setAttribute('x2',x);cur.style.visibility='visible';"
    "tip.textContent='';row(tip,c.label+' at '+(c.t0+i*c.w).toFixed(3)+' s');"
    "if(c.hold){var h=c.hold[i];row(tip,'most held in this step: '+fb(c.max[i]));"
    "for(var k=0;k<h.length;k++)if(h[k])row(tip,'  '+D.holders[k]+': '+fb(h[k]));"
    "var tp=c.top[i];if(tp.length)row(tip,'largest live allocations:');"
    "for(k=0;k<tp.length;k++)row(tip,'  '+fb(tp[k][0])+'  '+D.sites[tp[k][1]])}"
    "else{var cc=c.copies[i];for(k=0;k<cc.length;k++)row(tip,D.classes[k]+' copies: '+cc[k]);"
    "row(tip,'blocked in synchronous copies: '+(c.blocked[i]/1e6).toFixed(3)+' ms')}"
    "tip.style.display='block';tip.style.left=Math.min(ev.clientX+14,innerWidth-540)+'px';"
    "tip.style.top=(ev.clientY+14)+'px'});"
    "svg.addEventListener('mouseleave',function(){tip.style.display='none';"
    "cur.style.visibility='hidden'})});"
    "function sel(el){var on=!el.classList.contains('selected');"
    "Array.prototype.forEach.call(document.querySelectorAll('.finding.selected'),"
    "function(e){e.classList.remove('selected')});if(on)el.classList.add('selected');"
    "Array.prototype.forEach.call(document.querySelectorAll('.hl'),function(r){"
    "r.classList.toggle('on',on&&r.getAttribute('data-for')===el.id)})}"
    "Array.prototype.forEach.call(document.querySelectorAll('.finding'),function(el){"
    "el.addEventListener('click',function(){sel(el)})});"
    "if(location.hash){var f=document.getElementById(location.hash.slice(1));if(f)sel(f)}"
    "document.body.setAttribute('data-ready-ms',Math.round(performance.now()));"
    "document.body.setAttribute('data-ready','1')})();";

/* --- scales ----------------------------------------------------------------------------- */

static void cp_html_scales(cp_html *h)
{
    uint64_t t1 = 0, top = 0, cap_max = 0;
    double rate = 0;
    h->T0 = UINT64_MAX;
    for (size_t i = 0; i < h->rep->n_procs; i++) {
        const cp_series *s = h->rep->procs[i]->series;
        if (!s || s->cur < 0)
            continue;
        if (s->t0 < h->T0)
            h->T0 = s->t0;
        if (s->t_end > t1)
            t1 = s->t_end;
        for (int b = 0; b < cp_series_n(s); b++) {
            double n = 0;
            for (int c = 0; c < CP_CC_N; c++)
                n += (double)s->b[b].copies[c];
            if (n / ((double)s->width / 1e9) > rate)
                rate = n / ((double)s->width / 1e9);
        }
        for (int d = 0; d < s->n_dev; d++) {
            const cp_ser_dev *v = cp_series_dev(s, d);
            if (!v)
                continue;
            for (int b = 0; b < cp_series_n(s); b++) {
                uint64_t sum = 0;
                for (int k = 0; k < CP_HD_N; k++)
                    sum += v[b].hold[k];
                if (sum > top)
                    top = sum;
                if (v[b].max_held > top)
                    top = v[b].max_held;
            }
            const cp_proc *p = h->rep->procs[i];
            if (p->dev[d].total_mem > cap_max)
                cap_max = p->dev[d].total_mem;
        }
    }
    if (h->T0 == UINT64_MAX)
        h->T0 = 0;
    h->span = t1 > h->T0 ? t1 - h->T0 : 1;
    /* The capacity is on the scale when the card came near it; otherwise
     * it would flatten everything else. */
    h->yscale = cap_max && cap_max <= 2 * top ? cap_max : top + top / 20;
    if (top > h->yscale)
        h->yscale = top;
    if (!h->yscale)
        h->yscale = 1;
    h->cscale = rate > 0 ? rate * 1.05 : 1;
}

/* --- the data block ------------------------------------------------------------------- */

typedef struct cp_sites {
    cp_map ix;                  /* label pointer -> index + 1 */
    const char **labels;
    size_t n, cap;
} cp_sites;

static size_t cp_site_ix(cp_sites *t, cp_proc *p, uint64_t stack)
{
    const char *l = cp_site_label(&p->stacks, stack);
    size_t *v = cp_map_get(&t->ix, (uint64_t)(uintptr_t)l);
    if (v)
        return *v - 1;
    if (t->n == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 64;
        const char **nl = realloc(t->labels, nc * sizeof *nl);
        if (!nl)
            return 0;
        t->labels = nl;
        t->cap = nc;
    }
    v = cp_map_put(&t->ix, (uint64_t)(uintptr_t)l, NULL);
    if (!v)
        return 0;
    t->labels[t->n] = l;
    *v = ++t->n;
    return t->n - 1;
}

static void cp_chart_head(const cp_html *h, const cp_series *s, const cp_proc *p, int *first)
{
    fprintf(h->o, "%s{\"label\":", *first ? "" : ",\n");
    *first = 0;
    cp_js_str(h->o, h->proc_label[p->index]);
    fprintf(h->o, ",\"t0\":%.9f,\"w\":%.9f,\"n\":%d", (double)(s->t0 - h->T0) / 1e9,
            (double)s->width / 1e9, cp_series_n(s));
}

/* The charts in page order: per process, each device's memory, then copies. */
static void cp_html_data(const cp_html *h, cp_sites *st)
{
    FILE *o = h->o;
    int first = 1;
    fprintf(o, "<script type=\"application/json\" id=\"cp-data\">{\"charts\":[\n");
    for (size_t i = 0; i < h->rep->n_procs; i++) {
        cp_proc *p = h->rep->procs[i];
        const cp_series *s = p->series;
        if (!s || s->cur < 0)
            continue;
        int n = cp_series_n(s);
        for (int d = 0; d < s->n_dev; d++) {
            const cp_ser_dev *v = cp_series_dev(s, d);
            if (!v)
                continue;
            cp_chart_head(h, s, p, &first);
            fprintf(o, ",\"max\":[");
            for (int b = 0; b < n; b++)
                fprintf(o, "%s%llu", b ? "," : "", (unsigned long long)v[b].max_held);
            fprintf(o, "],\"hold\":[");
            for (int b = 0; b < n; b++) {
                fprintf(o, "%s[", b ? "," : "");
                for (int k = 0; k < CP_HD_N; k++)
                    fprintf(o, "%s%llu", k ? "," : "", (unsigned long long)v[b].hold[k]);
                fputc(']', o);
            }
            fprintf(o, "],\"top\":[");
            for (int b = 0; b < n; b++) {
                fprintf(o, "%s[", b ? "," : "");
                for (int k = 0; k < v[b].n_top; k++)
                    fprintf(o, "%s[%llu,%zu]", k ? "," : "", (unsigned long long)v[b].top[k].size,
                            cp_site_ix(st, p, v[b].top[k].stack));
                fputc(']', o);
            }
            fprintf(o, "]}");
        }
        cp_chart_head(h, s, p, &first);
        fprintf(o, ",\"copies\":[");
        for (int b = 0; b < n; b++)
            fprintf(o, "%s[%llu,%llu,%llu]", b ? "," : "", (unsigned long long)s->b[b].copies[0],
                    (unsigned long long)s->b[b].copies[1], (unsigned long long)s->b[b].copies[2]);
        fprintf(o, "],\"blocked\":[");
        for (int b = 0; b < n; b++)
            fprintf(o, "%s%llu", b ? "," : "", (unsigned long long)s->b[b].blocked_ns);
        fprintf(o, "]}");
    }
    fprintf(o, "],\n\"sites\":[");
    for (size_t i = 0; i < st->n; i++) {
        if (i)
            fputc(',', o);
        cp_js_str(o, st->labels[i]);
    }
    fprintf(o, "],\"holders\":[");
    for (int k = 0; k < CP_HD_N; k++) {
        if (k)
            fputc(',', o);
        cp_js_str(o, cp_holder_name(k));
    }
    fprintf(o, "],\"classes\":[\"pinned\",\"pageable\",\"peer\"],\"span\":%.9f,\"x0\":%.1f,"
               "\"W\":%.1f}</script>\n", (double)h->span / 1e9, cp_svg_x_origin(),
            cp_svg_width());
}

/* --- sections -------------------------------------------------------------------------- */

static void cp_html_legend(FILE *o)
{
    fprintf(o, "<div class=\"legend\">");
    for (int k = 0; k < CP_HD_N; k++)
        fprintf(o, "<span><i style=\"background:%s\"></i>%s</span>", cp_html_holder_color(k),
                cp_holder_name(k));
    fprintf(o, "<span><i style=\"background:#d62728\"></i>out of memory</span>"
               "<span><i style=\"background:#ffcc00\"></i>memory-growth</span>"
               "<span><i style=\"background:#ff7f0e\"></i>fragmentation</span>");
    for (int c = 0; c < CP_CC_N; c++)
        fprintf(o, "<span><i style=\"background:%s\"></i>%s copies</span>",
                cp_html_copy_color(c), cp_copy_class_name(c));
    fprintf(o, "</div>\n");
}

static void cp_html_charts(const cp_html *h)
{
    FILE *o = h->o;
    int chart = 0;
    double ht = h->rep->n_procs > 2 ? 80 : 150;
    fprintf(o, "<h2>Memory over time</h2>\n");
    cp_html_legend(o);
    for (size_t i = 0; i < h->rep->n_procs; i++) {
        const cp_proc *p = h->rep->procs[i];
        const cp_series *s = p->series;
        fprintf(o, "<h3>");
        cp_html_esc(o, h->proc_label[i]);
        fprintf(o, "</h3>\n");
        if (!s || s->cur < 0) {
            fprintf(o, "<p class=\"when\">no records</p>\n");
            continue;
        }
        int any = 0;
        for (int d = 0; d < s->n_dev; d++)
            if (cp_series_dev(s, d)) {
                cp_svg_memory(h, p, d, chart++, ht);
                any = 1;
            }
        if (!any)
            fprintf(o, "<p class=\"when\">no device memory held</p>\n");
        cp_svg_copies(h, p, chart++, ht / 3 > 40 ? ht / 3 : 40);
    }
}

static void cp_html_finding(const cp_html *h, size_t i)
{
    FILE *o = h->o;
    const cp_finding *f = h->rep->f[i];
    char b1[32], b2[32];
    fprintf(o, "<div class=\"finding %s\" id=\"finding-%zu\" data-check=\"%s\"",
            cp_sev_name(f->sev), i, f->check->id);
    if (f->t_from || f->t_to)
        fprintf(o, " data-from=\"%.6f\" data-to=\"%.6f\"",
                (double)(f->t_from > h->T0 ? f->t_from - h->T0 : 0) / 1e9,
                (double)(f->t_to > h->T0 ? f->t_to - h->T0 : 0) / 1e9);
    fprintf(o, "><span class=\"sev\">%s</span> [%s] <b>", cp_sev_name(f->sev), f->check->id);
    cp_html_esc(o, f->title);
    fprintf(o, "</b>");
    if (f->proc) {
        fprintf(o, "<div class=\"when\">");
        cp_html_esc(o, h->proc_label[f->proc->index]);
        if (f->t_from || f->t_to)
            fprintf(o, ", %.3f s to %.3f s", (double)(f->t_from - h->T0) / 1e9,
                    (double)(f->t_to - h->T0) / 1e9);
        fprintf(o, "</div>");
    }
    if (f->n_lines) {
        fprintf(o, "<pre>");
        for (size_t k = 0; k < f->n_lines; k++) {
            cp_html_esc(o, f->lines[k]);
            fputc('\n', o);
        }
        fprintf(o, "</pre>");
    }
    if (f->n_sites) {
        fprintf(o, "<table class=\"sites\">");
        size_t n = f->n_sites < 20 ? f->n_sites : 20;
        for (size_t k = 0; k < n; k++) {
            const cp_site *s = &f->sites[k];
            fprintf(o, "<tr><td>%llux</td><td>%s</td><td>%s</td><td>",
                    (unsigned long long)s->count, s->bytes ? cp_fmt_bytes(s->bytes, b1, sizeof b1)
                                                           : "",
                    s->ns ? cp_fmt_ns(s->ns, b2, sizeof b2) : "");
            cp_html_esc(o, s->label);
            if (s->note) {
                fprintf(o, " [");
                cp_html_esc(o, s->note);
                fputc(']', o);
            }
            fprintf(o, "</td></tr>");
        }
        if (f->n_sites > n)
            fprintf(o, "<tr><td colspan=\"4\">... %zu more sites</td></tr>", f->n_sites - n);
        fprintf(o, "</table>");
    }
    fprintf(o, "<pre><b>Why:</b> ");
    cp_html_esc(o, cp_finding_why(f));
    fprintf(o, "\n<b>Fix:</b> ");
    cp_html_esc(o, cp_finding_fix(f));
    fprintf(o, "</pre></div>\n");
}

int cp_out_html(FILE *o, cp_report *rep, const cp_out_opts *opt)
{
    (void)opt;
    int rc = -ENOMEM;
    cp_html h = { .o = o, .rep = rep };
    cp_sites st = { 0 };
    cp_map_init(&st.ix, sizeof(size_t));
    h.proc_label = calloc(rep->n_procs ? rep->n_procs : 1, sizeof *h.proc_label);
    if (!h.proc_label)
        goto out_map;
    for (size_t i = 0; i < rep->n_procs; i++) {
        char buf[256];
        h.proc_label[i] = strdup(cp_proc_label(rep->procs[i], buf, sizeof buf));
        if (!h.proc_label[i])
            goto out_labels;
    }
    cp_html_scales(&h);
    size_t n_sev[3] = { 0, 0, 0 };
    for (size_t i = 0; i < rep->n; i++)
        n_sev[rep->f[i]->sev]++;
    fprintf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               "<title>cuprobe report</title><style>%s</style></head>\n<body>\n", cp_css);
    fprintf(o, "<h1>cuprobe report: %zu trace%s</h1>\n<p>Findings: %zu error%s, %zu warning%s, "
               "%zu info. Hover a chart for what was held then and the largest live "
               "allocations; select a finding to mark its time.</p>\n",
            rep->n_procs, rep->n_procs == 1 ? "" : "s", n_sev[2], n_sev[2] == 1 ? "" : "s",
            n_sev[1], n_sev[1] == 1 ? "" : "s", n_sev[0]);
    for (size_t i = 0; i < rep->n; i++)
        if (rep->f[i]->top) {
            fprintf(o, "<p><b>");
            cp_html_esc(o, rep->f[i]->title);
            fprintf(o, "</b></p>\n");
        }
    cp_html_charts(&h);
    fprintf(o, "<h2>Findings</h2>\n");
    for (size_t i = 0; i < rep->n; i++)
        cp_html_finding(&h, i);
    if (!rep->n)
        fprintf(o, "<p>No problems found.</p>\n");
    fprintf(o, "<div id=\"tip\"></div>\n");
    cp_html_data(&h, &st);
    fprintf(o, "<script>%s</script>\n</body></html>\n", cp_js);
    rc = ferror(o) ? -EIO : 0;
out_labels:
    for (size_t i = 0; i < rep->n_procs; i++)
        free(h.proc_label[i]);
    free(h.proc_label);
out_map:
    cp_map_free(&st.ix);
    free(st.labels);
    return rc;
}
