// The reference page: static HTML and a small plain-JavaScript renderer of /openapi.json,
// with a "try it" form per operation. Kept as strings so they ship inside the build; the
// script is a separate file because helmet's Content-Security-Policy forbids inline scripts.

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>contentd API reference</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
  header { background: #1d2330; color: #fff; padding: 16px 24px; display: flex; gap: 16px; align-items: center; flex-wrap: wrap; }
  header h1 { font-size: 20px; margin: 0; flex: 1; }
  header input { width: 360px; max-width: 100%; padding: 6px 8px; border-radius: 4px; border: 0; font: inherit; }
  main { max-width: 1000px; margin: 0 auto; padding: 16px 24px 64px; }
  h2 { margin-top: 32px; border-bottom: 1px solid #d6d9e0; }
  details.op { background: #fff; border: 1px solid #d6d9e0; border-radius: 6px; margin: 8px 0; }
  details.op > summary { cursor: pointer; padding: 8px 12px; display: flex; gap: 12px; align-items: baseline; }
  .method { font: bold 12px monospace; text-transform: uppercase; padding: 2px 6px; border-radius: 3px; color: #fff; min-width: 52px; text-align: center; }
  .get { background: #2f7d32; } .post { background: #1565c0; } .put { background: #8e5a00; } .delete { background: #b71c1c; }
  .path { font-family: monospace; font-weight: 600; }
  .summary { color: #555; }
  .body { padding: 4px 16px 16px; border-top: 1px solid #eceef2; }
  pre { background: #f0f2f5; padding: 8px; overflow: auto; border-radius: 4px; font-size: 13px; }
  table { border-collapse: collapse; width: 100%; font-size: 14px; }
  td, th { border-bottom: 1px solid #eceef2; text-align: left; padding: 4px 8px; vertical-align: top; }
  code { font-size: 13px; }
  .try label { display: block; margin: 6px 0 2px; font-weight: 600; }
  .try input, .try textarea { width: 100%; box-sizing: border-box; font: 13px monospace; padding: 4px; }
  .try button { margin-top: 8px; padding: 6px 14px; font: inherit; cursor: pointer; }
  .status-ok { color: #2f7d32; font-weight: bold; } .status-error { color: #b71c1c; font-weight: bold; }
  #intro table { font-size: 13px; }
</style>
</head>
<body>
<header>
  <h1>contentd API reference</h1>
  <label>Token <input id="token" type="password" placeholder="cds_… session token or cdk_… API key" autocomplete="off"></label>
  <a href="/openapi.json" style="color:#9cc7ff">openapi.json</a>
</header>
<main>
  <div id="intro">Loading the reference…</div>
  <div id="operations"></div>
</main>
<script src="/docs/reference.js"></script>
</body>
</html>
`

// Plain ES2017 for any browser; no template literals so this file needs no escaping.
export const DOCS_SCRIPT = String.raw`(function () {
  'use strict';
  var tokenInput = document.getElementById('token');
  tokenInput.value = sessionStorage.getItem('contentd-token') || '';
  tokenInput.addEventListener('input', function () { sessionStorage.setItem('contentd-token', tokenInput.value); });

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === 'text') node.textContent = attrs[k]; else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return node;
  }

  // Minimal Markdown: paragraphs, tables, inline code. Everything goes through textContent.
  function inline(text) {
    var span = el('span');
    text.split('\u0060').forEach(function (part, i) { span.appendChild(i % 2 ? el('code', { text: part }) : document.createTextNode(part)); });
    return span;
  }
  function markdown(text) {
    var box = el('div');
    text.split(/\n\n+/).forEach(function (block) {
      var lines = block.split('\n');
      if (lines[0].charAt(0) === '|') {
        var table = el('table');
        lines.filter(function (l) { return !/^\|[-| ]+\|$/.test(l); }).forEach(function (line, i) {
          var cells = line.replace(/^\||\|$/g, '').split('|');
          table.appendChild(el('tr', {}, cells.map(function (c) { return el(i === 0 ? 'th' : 'td', {}, [inline(c.trim())]); })));
        });
        box.appendChild(table);
      } else box.appendChild(el('p', {}, [inline(block)]));
    });
    return box;
  }

  function resolve(spec, schema) {
    if (schema && schema.$ref) return spec.components.schemas[schema.$ref.split('/').pop()];
    return schema;
  }

  function example(spec, schema, depth) {
    schema = resolve(spec, schema) || {};
    if (depth > 4) return null;
    if (schema.default !== undefined) return schema.default;
    if (schema.enum) return schema.enum[0];
    if (schema.type === 'object' && schema.properties) {
      var out = {};
      (schema.required || Object.keys(schema.properties)).forEach(function (k) { out[k] = example(spec, schema.properties[k], depth + 1); });
      return out;
    }
    if (schema.type === 'object') return {};
    if (schema.type === 'array') return [];
    if (schema.type === 'number' || schema.type === 'integer') return 0;
    if (schema.type === 'string') return schema.format === 'date-time' ? new Date(Date.now() + 864e5).toISOString() : 'string';
    return 'any JSON value';
  }

  function tryIt(spec, method, path, op) {
    var form = el('form', { class: 'try' });
    var inputs = {};
    (op.parameters || []).forEach(function (p) {
      var input = el('input', { name: p.name, placeholder: p.in + (p.required ? ', required' : ', optional') });
      if (p.name === 'username') input.value = '@';
      inputs[p.name] = { param: p, input: input };
      form.appendChild(el('label', { text: p.name + ' (' + p.in + ')' }));
      form.appendChild(input);
    });
    var body = null;
    if (op.requestBody) {
      var schema = op.requestBody.content['application/json'].schema;
      body = el('textarea', { rows: '6' });
      body.value = JSON.stringify(example(spec, schema, 0), null, 2);
      form.appendChild(el('label', { text: 'JSON body' }));
      form.appendChild(body);
    }
    var send = el('button', { type: 'submit', text: 'Send ' + method.toUpperCase() });
    var result = el('div');
    form.appendChild(send);
    form.appendChild(result);
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var url = path, query = [], headers = {};
      Object.keys(inputs).forEach(function (name) {
        var p = inputs[name].param, v = inputs[name].input.value;
        if (p.in === 'path') url = url.replace('{' + name + '}', encodeURIComponent(v).replace(/^%40/, '@'));
        else if (v !== '' && p.in === 'query') query.push(encodeURIComponent(name) + '=' + encodeURIComponent(v));
        else if (v !== '' && p.in === 'header') headers[name] = v;
      });
      if (query.length) url += '?' + query.join('&');
      if (tokenInput.value) headers.Authorization = 'Bearer ' + tokenInput.value;
      var init = { method: method.toUpperCase(), headers: headers };
      if (body) { headers['Content-Type'] = 'application/json'; init.body = body.value; }
      result.textContent = 'Sending…';
      fetch(url, init).then(function (response) {
        return response.text().then(function (text) {
          var pretty = text;
          try { pretty = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* not JSON */ }
          var etag = response.headers.get('ETag');
          result.textContent = '';
          result.appendChild(el('p', { class: response.ok ? 'status-ok' : 'status-error', text: response.status + ' ' + response.statusText + (etag ? '  ETag: ' + etag : '') }));
          result.appendChild(el('pre', { text: pretty }));
        });
      }).catch(function (e) { result.textContent = 'Request failed: ' + e.message; });
    });
    return form;
  }

  function renderOperation(spec, method, path, op) {
    var body = el('div', { class: 'body' });
    if (op.description) body.appendChild(markdown(op.description));
    body.appendChild(el('p', { text: 'Authentication: ' + ({ none: 'none', any: 'session token or API key', session: 'session token', metrics: 'METRICS_TOKEN (unless METRICS=open)' })[op['x-contentd-auth']] }));
    if (op.parameters) {
      body.appendChild(el('h4', { text: 'Parameters' }));
      body.appendChild(el('table', {}, [el('tr', {}, [el('th', { text: 'name' }), el('th', { text: 'in' }), el('th', { text: 'description' })])].concat(
        op.parameters.map(function (p) { return el('tr', {}, [el('td', {}, [el('code', { text: p.name })]), el('td', { text: p.in }), el('td', {}, [inline(p.description || '')])]); }))));
    }
    if (op.requestBody) {
      var schema = op.requestBody.content['application/json'].schema;
      body.appendChild(el('h4', { text: 'Request body' }));
      if (op.requestBody.description) body.appendChild(markdown(op.requestBody.description));
      body.appendChild(el('pre', { text: JSON.stringify(resolve(spec, schema), null, 2) }));
    }
    body.appendChild(el('h4', { text: 'Responses' }));
    body.appendChild(el('table', {}, Object.keys(op.responses).map(function (status) {
      var r = op.responses[status];
      var json = r.content && r.content['application/json'];
      var schemaName = json && json.schema && json.schema.$ref ? json.schema.$ref.split('/').pop() : '';
      return el('tr', {}, [el('td', {}, [el('code', { text: status })]), el('td', {}, [inline(r.description), schemaName ? el('div', { text: 'schema: ' + schemaName }) : null])]);
    })));
    body.appendChild(el('h4', { text: 'Try it' }));
    body.appendChild(tryIt(spec, method, path, op));
    return el('details', { class: 'op', id: op.operationId }, [
      el('summary', {}, [el('span', { class: 'method ' + method, text: method }), el('span', { class: 'path', text: path }), el('span', { class: 'summary', text: op.summary })]),
      body
    ]);
  }

  fetch('/openapi.json').then(function (r) { return r.json(); }).then(function (spec) {
    var intro = document.getElementById('intro');
    intro.textContent = '';
    intro.appendChild(el('p', { text: spec.info.title + ' — OpenAPI ' + spec.openapi + ', version ' + spec.info.version }));
    intro.appendChild(markdown(spec.info.description));
    var container = document.getElementById('operations');
    spec.tags.forEach(function (tag) {
      container.appendChild(el('h2', { text: tag.name }));
      Object.keys(spec.paths).forEach(function (path) {
        Object.keys(spec.paths[path]).forEach(function (method) {
          var op = spec.paths[path][method];
          if (op.tags.indexOf(tag.name) !== -1) container.appendChild(renderOperation(spec, method, path, op));
        });
      });
    });
  }).catch(function (e) { document.getElementById('intro').textContent = 'Could not load /openapi.json: ' + e.message; });
})();
`
