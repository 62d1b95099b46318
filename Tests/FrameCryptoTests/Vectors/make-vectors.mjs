// Known-answer vectors for FrameCrypto, made once with WebCrypto (node's globalThis.crypto.subtle), an
// implementation independent of ours (OpenSSL): the FrameCryptor format for VP8 (see README.md here).
//
//   node make-vectors.mjs IVF OUT.json
//
// IVF: a VP8 IVF file made by our encoder; its frame 0 (a keyframe) and frame 1 (a delta frame) are
// encrypted with a fixed passphrase, salt, key index and IVs. OUT.json holds every input and output as hex.
import { readFileSync, writeFileSync } from "node:fs";

const subtle = globalThis.crypto.subtle;
const [ivfPath, outPath, sourceNote] = process.argv.slice(2);
if (!ivfPath || !outPath) {
  console.error("usage: node make-vectors.mjs IVF OUT.json [SOURCE-NOTE]");
  process.exit(64);
}

const hex = (bytes) => Buffer.from(bytes).toString("hex");
const fromHex = (text) => new Uint8Array(Buffer.from(text, "hex"));

// IVF (a 32-byte file header, then per frame a 12-byte header: 4-byte little-endian size, 8-byte timestamp).
function ivfFrames(bytes) {
  if (bytes.toString("latin1", 0, 4) !== "DKIF" || bytes.toString("latin1", 8, 12) !== "VP80") {
    throw new Error("not a VP8 IVF file");
  }
  const frames = [];
  for (let offset = bytes.readUInt16LE(6); offset + 12 <= bytes.length;) {
    const size = bytes.readUInt32LE(offset);
    frames.push(new Uint8Array(bytes.subarray(offset + 12, offset + 12 + size)));
    offset += 12 + size;
  }
  return frames;
}

// PBKDF2-HMAC-SHA256 over the passphrase's UTF-8 bytes, salt = the ratchet salt's UTF-8 bytes, 128 bits.
async function deriveKeyBytes(passphrase, salt, iterations) {
  const material = await subtle.importKey("raw", new TextEncoder().encode(passphrase), "PBKDF2", false, ["deriveBits"]);
  const bits = await subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt: new TextEncoder().encode(salt), iterations }, material, 128);
  return new Uint8Array(bits);
}

// clear header (10 bytes on a keyframe — bit 0 of byte 0 is 0 —, else 3) ‖ AES-GCM(rest, AAD = header)
// with its 16-byte tag ‖ IV ‖ 12 ‖ keyIndex.
async function encryptFrame(keyBytes, frame, iv, keyIndex) {
  const key = await subtle.importKey("raw", keyBytes, "AES-GCM", false, ["encrypt"]);
  const clear = (frame[0] & 1) === 0 ? 10 : 3;
  const header = frame.subarray(0, clear);
  const sealed = new Uint8Array(await subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: header, tagLength: 128 }, key, frame.subarray(clear)));
  const out = new Uint8Array(clear + sealed.length + iv.length + 2);
  out.set(header, 0);
  out.set(sealed, clear);
  out.set(iv, clear + sealed.length);
  out[out.length - 2] = iv.length;
  out[out.length - 1] = keyIndex;
  return out;
}

const passphrase = "screencast known-answer passphrase \u00e9\u00e8";  // non-ASCII: UTF-8 is what is hashed
const salt = "LKFrameEncryptionKey";
const iterations = 100000;
const keyIndex = 2;
const frames = ivfFrames(readFileSync(ivfPath));
if (frames.length < 2 || (frames[0][0] & 1) !== 0 || (frames[1][0] & 1) !== 1) {
  throw new Error("frame 0 must be a keyframe and frame 1 a delta frame");
}
const keyBytes = await deriveKeyBytes(passphrase, salt, iterations);
const chosen = [
  { name: "keyframe", frame: frames[0], iv: fromHex("00112233445566778899aabb") },
  { name: "delta frame", frame: frames[1], iv: fromHex("5ca1ab1e0000000000000001") },
];
const vectors = [];
for (const { name, frame, iv } of chosen) {
  vectors.push({ name, isKeyframe: (frame[0] & 1) === 0, plainHex: hex(frame), ivHex: hex(iv),
    encryptedHex: hex(await encryptFrame(keyBytes, frame, iv, keyIndex)) });
}
const otherSalt = "screencast-test-salt";
const output = {
  made: {
    by: "Tests/FrameCryptoTests/Vectors/make-vectors.mjs with node " + process.version + " (WebCrypto: globalThis.crypto.subtle)",
    source: sourceNote || ivfPath,
    date: new Date().toISOString().slice(0, 10),
  },
  passphrase, salt, iterations, keyIndex, keyHex: hex(keyBytes),
  otherSalt: { salt: otherSalt, keyHex: hex(await deriveKeyBytes(passphrase, otherSalt, iterations)) },
  frames: vectors,
};
writeFileSync(outPath, JSON.stringify(output, null, 2) + "\n");
console.log("wrote " + outPath + ": key " + hex(keyBytes) + ", frames " + vectors.map((v) => v.plainHex.length / 2).join(", ") + " bytes");
