/**
 * The members' pages' part of the one stylesheet (appended to the public pages' STYLESHEET in
 * layout.ts, so both share colours and the light/dark switch): the navigation, forms, tables,
 * notices, and a focus ring that is always visible for keyboard users.
 */
export const MEMBER_PAGES_STYLE = `body.member header.site{max-width:58rem}body.member main{max-width:none;margin:0;padding:0 0 3rem;min-width:0}
header.site{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between}
header.site form{margin:0}header.site .who{color:var(--muted);font-weight:400;font-size:.9rem}
:focus-visible{outline:3px solid var(--link);outline-offset:2px}
.member-grid{display:grid;gap:1.5rem;grid-template-columns:minmax(10rem,13rem) minmax(0,1fr);max-width:58rem;margin:0 auto;padding:0 1rem}
@media (max-width:40rem){.member-grid{grid-template-columns:1fr}}
nav.area ul{list-style:none;margin:0;padding:0}nav.area li{margin:.15rem 0}
nav.area a{display:block;padding:.4rem .6rem;border-radius:.4rem;text-decoration:none}
nav.area a[aria-current=page]{background:var(--card);color:var(--fg);font-weight:600}
nav.area h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);margin:1rem 0 .25rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
form.stack{display:grid;gap:.9rem;max-width:32rem}form.inline{display:inline}
fieldset{border:1px solid var(--line);border-radius:.5rem;padding:.75rem 1rem;margin:0}legend{font-weight:600;padding:0 .25rem}
.fields{display:grid;gap:.9rem}label{font-weight:600}.field{display:grid;gap:.3rem}.check{display:flex;gap:.5rem;align-items:flex-start}.check label{font-weight:400}
.hint{color:var(--muted);font-size:.85rem;margin:0}
input[type=text],input[type=password],input[type=url],input[type=file],select{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--muted);border-radius:.4rem;padding:.45rem .6rem;max-width:100%}
input[type=checkbox]{flex:none;width:1.1rem;height:1.1rem;margin:.2rem 0 0;accent-color:var(--link)}
button{font:inherit;border-radius:.4rem;padding:.45rem 1rem;cursor:pointer;border:1px solid var(--link);background:var(--link);color:var(--bg)}
button.secondary{background:transparent;color:var(--link)}button.danger{background:#b3261e;border-color:#b3261e;color:#fff}
.notice{border-radius:.4rem;padding:.6rem .8rem;margin:0 0 1rem;background:var(--card);border-left:4px solid var(--link)}
.notice.alert{border-left-color:#b3261e}
table.list{width:100%;border-collapse:collapse;margin:.5rem 0 1rem}table.list th,table.list td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
table.list td.actions{text-align:right;white-space:nowrap}progress{width:100%}
svg.qr{max-width:100%;height:auto}ol.codes{columns:2;font-size:1.05rem}code.secret{word-spacing:.3em;font-size:1.05rem}
`;
