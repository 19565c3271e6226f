import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The dashboard is served by the API server at `/` (src/dashboard): hashed files under /assets are
// immutable, index.html is not cached. `npm run dev` proxies the API to a local server.
export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8080', '/config.json': 'http://127.0.0.1:8080' },
  },
});
