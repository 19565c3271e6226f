/**
 * A QR code drawn as SVG (qrcode-generator computes the modules): one path, no inline style or
 * image data, so the dashboard's Content-Security-Policy has nothing to object to. Dark on white
 * with the four-module quiet zone the standard asks for, so phone cameras read it.
 */
import qrcode from 'qrcode-generator';
import { useMemo } from 'react';

const QUIET_ZONE = 4;

export function QrCode({ text, label, size = 192 }: { text: string; label: string; size?: number }) {
  const { path, extent } = useMemo(() => modulesPath(text), [text]);
  return (
    <svg
      className="qr-code"
      role="img"
      aria-label={label}
      width={size}
      height={size}
      viewBox={`0 0 ${extent} ${extent}`}
      shapeRendering="crispEdges"
    >
      <rect width={extent} height={extent} fill="#ffffff" />
      <path d={path} fill="#000000" />
    </svg>
  );
}

/** The dark modules as one path, each row's runs merged into rectangles. */
function modulesPath(text: string): { path: string; extent: number } {
  const code = qrcode(0, 'M');
  // The library's byte mode reads one byte per character: hand it UTF-8, byte by byte.
  code.addData(String.fromCharCode(...new TextEncoder().encode(text)), 'Byte');
  code.make();
  const count = code.getModuleCount();
  const parts: string[] = [];
  for (let row = 0; row < count; row += 1) {
    let col = 0;
    while (col < count) {
      if (!code.isDark(row, col)) {
        col += 1;
        continue;
      }
      const start = col;
      while (col < count && code.isDark(row, col)) col += 1;
      parts.push(`M${start + QUIET_ZONE} ${row + QUIET_ZONE}h${col - start}v1h${start - col}z`);
    }
  }
  return { path: parts.join(''), extent: count + 2 * QUIET_ZONE };
}
