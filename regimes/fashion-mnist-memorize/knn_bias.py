#!/usr/bin/python3
"""NOTES.md, "Where the memory is": does the drop in k-nearest-neighbour accuracy
on the test images of the thinned classes, when the non-IID forget ids leave the
original's penultimate features, track the oracle estimate's bias? Prints, per
seed, the oracle's forget accuracy and the kNN accuracy with and without the ids.

    /usr/bin/python3 regimes/fashion-mnist-memorize/knn_bias.py
"""
import json, os, sys
import numpy as np, onnx, torch
from onnx import numpy_helper
import torch.nn.functional as F

R=os.path.dirname(os.path.abspath(__file__))
import importlib.util
spec=importlib.util.spec_from_file_location('t',R+'/train.py'); t=importlib.util.module_from_spec(spec); spec.loader.exec_module(t)
d=np.load(R+'/work/fmnist6k.npz')
mean,std=0.2857,0.3537
def prep(x): return torch.tensor(((x/255.0)-mean)/std,dtype=torch.float32).unsqueeze(1)
Xtr,Ytr,Xte,Yte=prep(d['x_train']),d['y_train'],prep(d['x_test']),d['y_test']
orc={}
for l in open(R+'/results.jsonl'):
    r=json.loads(l)
    if r['kind']=='oracle': orc[(r['forget_set'],r['seed'])]=r['accuracy']
def feats(m,X):
    with torch.no_grad():
        x=F.max_pool2d(F.relu(m.conv1(X)),2); x=F.max_pool2d(F.relu(m.conv2(x)),2)
        h=F.relu(m.fc1(torch.flatten(x,1))); return h.numpy(), m.fc2(h).numpy()
def knn_acc(Ftr,ytr,Fte,yte,k):
    # cosine kNN
    a=Ftr/ (np.linalg.norm(Ftr,axis=1,keepdims=True)+1e-9); b=Fte/(np.linalg.norm(Fte,axis=1,keepdims=True)+1e-9)
    S=b@a.T; idx=np.argpartition(-S,k,axis=1)[:,:k]
    votes=ytr[idx]; pred=np.array([np.bincount(v,minlength=10).argmax() for v in votes]); return (pred==yte)
for s in range(3):
    m=t.SmallCNN(); g=onnx.load(f'{R}/models/original-seed{s}.onnx')
    sd={i.name:torch.tensor(numpy_helper.to_array(i).copy()) for i in g.graph.initializer}
    m.load_state_dict({k:sd[k] for k in m.state_dict()}); m.eval()
    Ftr,_=feats(m,Xtr); Fte,Lte=feats(m,Xte)
    ids=np.array([int(l.split()[0]) for l in open(f'{R}/forget/non-iid-seed{s}.txt') if l.strip() and not l.startswith('#')])
    keep=np.ones(len(Ytr),bool); keep[ids]=False
    cls=[2,5]; sel=np.isin(Yte,cls)
    out=[]
    for k in (1,5,15):
        full=knn_acc(Ftr,Ytr,Fte[sel],Yte[sel],k).mean(); thin=knn_acc(Ftr[keep],Ytr[keep],Fte[sel],Yte[sel],k).mean()
        out.append('k%d %.2f->%.2f (%.2f)'%(k,100*full,100*thin,100*(full-thin)))
    print('seed',s,'oracle forget %.2f'%(100*orc[('non-iid',s)]['forget']),' '.join(out))
