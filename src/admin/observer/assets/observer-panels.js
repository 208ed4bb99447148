// The observer page's panels beyond the core views, each a renderer in Molo.panels (none yet).
'use strict';
