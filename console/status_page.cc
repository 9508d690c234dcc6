// The --ui page: one HTML document with its CSS and JS inline, so it works with no
// network beyond the console. It polls /api/status twice a second and redraws:
//   - filters as boxes in columns (topological depth), each with its copies: host, stage,
//     unit, what it waits on;
//   - streams as edges labelled buffers/s and MB/s (and blocked shares), coloured by
//     backpressure: red when producers are blocked most (the consumer is the bottleneck),
//     blue when consumers wait most (starved), grey when neither;
//   - the units of work with state and duration; the failure, if any; the stall report while
//     no buffer moves; for sluice serve, a
//     deployment that broke between units (how often, and the latest cause).
// Elements carry data-* attributes (data-filter, data-stream, data-buffers-per-second)
// so tests can read the DOM without parsing text.
#include "console/status_views.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

namespace sluice::console {

namespace {

// The page's parts: its style and its script are hashed for the Content-Security-Policy.
const char* const kHead = R"PAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>sluice run</title>
)PAGE";
const char* const kStyle = R"PAGE(body{font:13px system-ui,sans-serif;margin:12px;background:#fafafa;color:#222}
h1{font-size:17px;margin:0 0 6px}
#head span{margin-right:14px}
.st-running{color:#06c}.st-ok{color:#080}.st-failed{color:#c00}.st-starting{color:#888}
svg{background:#fff;border:1px solid #ddd;display:block;margin:8px 0}
.box rect{fill:#eef3fb;stroke:#4a6fa5;rx:6}
.box text{font-size:12px}
.box .name{font-weight:bold;font-size:13px}
.edge text{font-size:11px;fill:#333}
table{border-collapse:collapse;margin:6px 0}
td,th{border:1px solid #ddd;padding:2px 8px;text-align:left}
#failure{display:none;border:2px solid #c00;background:#fee;padding:6px;white-space:pre-wrap}
#failure.recovered{border-color:#999;background:#f4f4f4}
#stall{display:none;border:2px solid #c80;background:#fff4e0;padding:6px;white-space:pre-wrap}
.box text.failed{fill:#c00;font-weight:bold}
#redeploy{display:none;border:2px solid #c80;background:#ffe;padding:6px;white-space:pre-wrap}
.legend span{display:inline-block;width:24px;height:4px;vertical-align:middle;margin:0 4px 0 10px}
.legend .red{background:#d33}.legend .blue{background:#36c}.legend .grey{background:#999}
h2{font-size:14px}
)PAGE";
const char* const kBody = R"PAGE(</head>
<body>
<h1 id="title">sluice</h1>
<div id="head"><span id="status" data-status="">connecting…</span><span id="wall"></span><span id="unit"></span></div>
<div class="legend">edges:<span class="red"></span>producers blocked (consumer slow)
<span class="blue"></span>consumers starved<span class="grey"></span>neither</div>
<div id="failure"></div>
<div id="stall"></div>
<div id="redeploy"></div>
<svg id="graph" width="900" height="200"></svg>
<h2>Streams</h2>
<table id="streams"><thead><tr><th>stream</th><th>policy</th><th>buffers</th><th>buf/s</th><th>MB/s</th>
<th>prod blk</th><th>cons blk</th><th>queued</th></tr></thead><tbody></tbody></table>
<h2>Units of work</h2><div id="unitcount"></div>
<table id="units"><thead><tr><th>#</th><th>work</th><th>state</th><th>seconds</th></tr></thead><tbody></tbody></table>
<h2>Hosts</h2>
<table id="hosts"><thead><tr><th>host</th><th>address</th><th>copies</th><th>buffers written</th><th>MB written</th><th>last report</th></tr></thead><tbody></tbody></table>
<div id="partial"></div>
)PAGE";
const char* const kScript = R"PAGE(
"use strict";
const NS="http://www.w3.org/2000/svg";
function el(tag,attrs,parent,text){const e=document.createElementNS(NS,tag);for(const k in attrs)e.setAttribute(k,attrs[k]);if(text!==undefined)e.textContent=text;if(parent)parent.appendChild(e);return e;}
function si(v){const u=["","k","M","G"];let i=0;while(v>=1000&&i<3){v/=1000;i++;}return (i?v.toFixed(v<10?2:1):v.toFixed(0))+u[i];}
function pct(v){return (100*v).toFixed(0)+"%";}
function colour(r){const p=r.producer_blocked,c=r.consumer_blocked;if(p<0.05&&c<0.05)return "#999";if(p>=c){const t=Math.min(1,p);return "rgb("+Math.round(150+105*t)+",60,60)";}const t=Math.min(1,c);return "rgb(60,"+Math.round(100+30*(1-t))+","+Math.round(150+105*t)+")";}
function row(tbody,cells,attrs){const tr=document.createElement("tr");for(const k in attrs||{})tr.setAttribute(k,attrs[k]);for(const c of cells){const td=document.createElement("td");td.textContent=c;tr.appendChild(td);}tbody.appendChild(tr);return tr;}
function draw(s){
  document.title="sluice: "+s.topology.name+" ("+s.status+")";
  document.getElementById("title").textContent=s.topology.name+" — "+s.topology.file;
  const st=document.getElementById("status");st.textContent=s.status+(s.ended?" (exit "+s.exit_code+")":"");st.className="st-"+s.status;st.dataset.status=s.status;
  document.getElementById("wall").textContent=s.wall_seconds.toFixed(1)+" s";
  const cur=s.units.find(u=>u.state==="running");
  // Units are numbered from 0, as in the table, the logs and sluice submit.
  document.getElementById("unit").textContent=cur?("running unit "+cur.index+" ["+cur.work+"]"):"";
  const f=document.getElementById("failure");
  // sluice serve goes on after a failed unit: once later units finished, the failure is
  // shown as the latest one, greyed, with how many finished since (it stayed red for ever).
  const x=s.failure;const since=x?s.units.filter(u=>u.index>x.unit&&u.state==="finished").length:0;
  if(x){f.style.display="block";f.dataset.filter=x.filter;f.className=since?"recovered":"";f.dataset.since=since;
    f.textContent=(since?"the latest failure; "+since+(since==1?" unit":" units")+" finished since: ":"")
      +(x.filter?("failed: filter "+x.filter+" copy "+x.copy+" on host "+x.host+" in "+x.stage+" (unit "+x.unit+"): "+x.message)
                :("failed in unit "+x.unit+": "+x.message));}
  else f.style.display="none";
  // The console's stall report, while no buffer moves: what each copy waits on, and where.
  const sl=document.getElementById("stall");
  if(s.stall){sl.style.display="block";sl.textContent="stalled: "+s.stall;}else sl.style.display="none";
  const r=document.getElementById("redeploy");
  if(s.deployment_lost){r.style.display="block";
    r.textContent="the deployment broke between units ("+s.deployments_lost+(s.deployments_lost==1?" time":" times")
      +"; the next unit deploys the application again): "+s.deployment_lost.message;}
  else r.style.display="none";
  // Layout: columns by depth, boxes sized by their copies.
  const W=220,GAP=150,LINE=15;const cols={};const pos={};
  const copies={};for(const c of s.copies){(copies[c.filter]=copies[c.filter]||[]).push(c);}
  for(const fl of s.filters){(cols[fl.column]=cols[fl.column]||[]).push(fl);}
  let height=0;
  for(const k in cols){let y=20;for(const fl of cols[k]){const h=34+LINE*(copies[fl.name]||[]).length;pos[fl.name]={x:20+k*(W+GAP),y:y,h:h};y+=h+30;}height=Math.max(height,y);}
  const g=document.getElementById("graph");while(g.firstChild)g.removeChild(g.firstChild);
  const ncols=Object.keys(cols).length;g.setAttribute("width",Math.max(600,40+ncols*(W+GAP)));g.setAttribute("height",Math.max(120,height));
  const defs=el("defs",{},g);const m=el("marker",{id:"arr",markerWidth:10,markerHeight:10,refX:9,refY:5,orient:"auto",markerUnits:"userSpaceOnUse"},defs);el("path",{d:"M0,0 L10,5 L0,10 z",fill:"#555"},m);
  const fan={};
  for(const e of s.streams){
    const a=pos[e.from.split(".")[0]],b=pos[e.to.split(".")[0]];if(!a||!b)continue;
    const k=e.from.split(".")[0];fan[k]=(fan[k]||0)+1;
    const x1=a.x+W,y1=a.y+a.h/2,x2=b.x,y2=b.y+b.h/2;
    const r=e.rate;const grp=el("g",{class:"edge","data-stream":e.stream,"data-buffers-per-second":r.buffers_per_second,"data-bytes-per-second":r.bytes_per_second},g);
    el("line",{x1:x1,y1:y1,x2:x2-2,y2:y2,stroke:colour(r),"stroke-width":2+Math.min(6,Math.log10(1+r.buffers_per_second)),"marker-end":"url(#arr)"},grp);
    const mx=(x1+x2)/2,my=(y1+y2)/2;
    const t=el("text",{x:mx,y:my-30,"text-anchor":"middle"},grp);
    el("tspan",{x:mx,dy:0},t,e.from+" → "+e.to);
    el("tspan",{x:mx,dy:13},t,si(r.buffers_per_second)+" buf/s "+(r.bytes_per_second/1e6).toFixed(2)+" MB/s");
    el("tspan",{x:mx,dy:13},t,"blk "+pct(r.producer_blocked)+"/"+pct(r.consumer_blocked)+" q "+e.queued+"/"+e.capacity);
  }
  for(const fl of s.filters){
    const p=pos[fl.name];const grp=el("g",{class:"box","data-filter":fl.name},g);
    el("rect",{x:p.x,y:p.y,width:W,height:p.h,rx:6},grp);
    el("text",{x:p.x+8,y:p.y+16,class:"name"},grp,fl.name);
    el("text",{x:p.x+8,y:p.y+29,fill:"#555"},grp,fl.lang+" "+fl.class+" ×"+fl.copies);
    (copies[fl.name]||[]).forEach((c,i)=>{
      const wait=c.waiting_for?(" "+c.waiting_for+" "+c.waiting_seconds.toFixed(1)+"s"):"";
      // The copy that failed, while its failure is the news, is marked: "failed here".
      const bad=x&&!since&&x.filter===c.filter&&x.copy===c.copy;
      el("text",{x:p.x+12,y:p.y+44+i*LINE,"data-copy":c.filter+"#"+c.copy,"data-host":c.host,class:bad?"failed":""},grp,
         "#"+c.copy+" @"+c.host+": "+c.stage+" u"+c.unit+wait+(bad?" — failed here":""));
    });
  }
  const sb=document.querySelector("#streams tbody");sb.innerHTML="";
  for(const e of s.streams){const r=e.rate;row(sb,[e.stream,e.policy,e.buffers,si(r.buffers_per_second),(r.bytes_per_second/1e6).toFixed(2),pct(r.producer_blocked),pct(r.consumer_blocked),e.queued+"/"+e.capacity],{"data-stream":e.stream});}
  const ub=document.querySelector("#units tbody");ub.innerHTML="";
  // Every unit that failed or runs, and the last ten that finished; the rest are counted.
  const done=s.units.filter(u=>u.state==="finished");const shown=new Set(done.slice(-10).map(u=>u.index));
  for(const u of s.units)if(u.state==="running"||u.state==="failed")shown.add(u.index);
  const pending=s.units.filter(u=>u.state==="pending").length;const notrun=s.units.filter(u=>u.state==="not run").length;
  const failed=(s.earlier_failed||0)+s.units.filter(u=>u.state==="failed").length;
  document.getElementById("unitcount").textContent=(s.earlier_finished+done.length)+" of "+(s.earlier_units+s.units.length)+" finished, "+(failed?failed+" failed, ":"")+pending+" pending"+(notrun?", "+notrun+" not run (the run failed before them)":"");
  for(const u of s.units)if(shown.has(u.index))row(ub,[u.index,u.work,u.state,u.seconds.toFixed(3)],{"data-unit":u.index,"data-state":u.state});
  const hb=document.querySelector("#hosts tbody");hb.innerHTML="";
  for(const h of s.hosts)row(hb,[h.name,h.address,h.copies,h.buffers_written,(h.bytes_written/1e6).toFixed(1),h.report_age_seconds<0?"-":h.report_age_seconds.toFixed(1)+" s ago"],{"data-host":h.name});
  const pc=s.partial_counts_from_hosts||[];
  document.getElementById("partial").textContent=pc.length?"at least: no final counts came from host "+pc.join("; host ")+": the counts above are what those hosts had carried by their last report":"";
}
let failures=0,last=null;
function poll(){
  fetch("/api/status",{cache:"no-store"}).then(r=>{if(!r.ok)throw new Error("HTTP "+r.status);return r.json();})
    .then(s=>{failures=0;last=s;draw(s);})
    // A console that ended waits for a polling page to fetch the end before it exits: then
    // its going away is expected, and the run's end stays on show.
    .catch(e=>{if(++failures>2){const st=document.getElementById("status");
      if(last&&last.ended){st.textContent=last.status+" (exit "+last.exit_code+"); the console has exited";}
      else{st.textContent="console gone ("+e.message+"); showing the last state";st.className="st-starting";}}})
    .finally(()=>setTimeout(poll,500));
}
poll();
)PAGE";
const char* const kTail = R"PAGE(
</body></html>
)PAGE";

// "'sha256-<base64>'": a CSP source that allows exactly this inline text.
std::string csp_hash(const std::string& text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  unsigned char b64[4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(b64, digest, SHA256_DIGEST_LENGTH);
  return "'sha256-" + std::string(reinterpret_cast<const char*>(b64), static_cast<std::size_t>(n)) + "'";
}

}  // namespace

const std::string& status_page() {
  static const std::string page = std::string(kHead) + "<style>" + kStyle + "</style>" + kBody + "<script>" +
                                  kScript + "</script>" + kTail;
  return page;
}

const std::string& status_page_csp() {
  static const std::string csp = "default-src 'none'; script-src " + csp_hash(kScript) + "; style-src " +
                                 csp_hash(kStyle) + "; connect-src 'self'; img-src 'none'; frame-ancestors 'none'";
  return csp;
}

}  // namespace sluice::console
