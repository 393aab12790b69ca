// Shareable links: the code travels in the URL hash as base64url of its UTF-8 bytes.
//   <origin>/#code=<base64url>

export function encodeCode(code) {
  const bytes = new TextEncoder().encode(code);
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function decodeCode(text) {
  let b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  while (b64.length % 4) b64 += '=';
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

export function codeFromHash(hash) {
  const h = (hash || '').replace(/^#/, '');
  const params = new URLSearchParams(h);
  const enc = params.get('code');
  if (!enc) return null;
  try { return decodeCode(enc); } catch (e) { return null; }
}

export function shareUrl(code, base) {
  const u = new URL(base);
  u.hash = 'code=' + encodeCode(code);
  return u.toString();
}
